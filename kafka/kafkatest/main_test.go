package kafkatest_test

import (
	"testing"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }
