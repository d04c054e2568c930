package kafka

import (
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Feature is one KIP-584 feature flag (metadata.version, kraft.version,
// transaction.version, group.version, share.version, ...).
type Feature struct {
	Name string
	// Finalized is the level the cluster runs at. A feature the broker
	// supports but the controller never finalized is at level 0 (off):
	// ApiVersions leaves level-0 features out, and kafka-features.sh
	// prints them as FinalizedVersionLevel: 0.
	Finalized *int16
	// SupportedMin and SupportedMax are the levels the answering broker's
	// software supports; nil: it does not know the feature.
	SupportedMin, SupportedMax *int16
}

// Features reads the cluster's features from ApiVersions (v3+): any broker
// answers with the levels the controller finalized (they reach every broker
// through the metadata log) and the range its own software supports, which
// is what Kafka's Admin.describeFeatures and kafka-features.sh describe do.
// It returns the id of the broker that answered.
func (c *Cluster) Features(ctx context.Context) ([]Feature, int32, error) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kql", "0"
	raw, by, err := c.AnyBroker(ctx, "ApiVersions", []string{"features"}, req)
	if err != nil {
		return nil, by, err
	}
	resp := raw.(*kmsg.ApiVersionsResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, by, &BrokerError{API: "ApiVersions", ID: by, Addr: c.addr(by), Err: err}
	}
	byName := map[string]*Feature{}
	get := func(name string) *Feature {
		f := byName[name]
		if f == nil {
			f = &Feature{Name: name}
			byName[name] = f
		}
		return f
	}
	for _, s := range resp.SupportedFeatures {
		f := get(s.Name)
		lo, hi := s.MinVersion, s.MaxVersion
		f.SupportedMin, f.SupportedMax = &lo, &hi
	}
	for _, ff := range resp.FinalizedFeatures {
		lvl := ff.MaxVersionLevel
		get(ff.Name).Finalized = &lvl
	}
	out := make([]Feature, 0, len(byName))
	for _, f := range byName {
		if f.Finalized == nil && f.SupportedMax != nil {
			off := int16(0)
			f.Finalized = &off
		}
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b Feature) int { return strings.Compare(a.Name, b.Name) })
	return out, by, nil
}
