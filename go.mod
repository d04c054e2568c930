module github.com/kql-dev/kql

go 1.26.8

require github.com/twmb/franz-go v1.22.3
