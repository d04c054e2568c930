package oauth

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Diagnose explains a token the broker refused. Kafka answers only
// {"status":"invalid_token"} and writes the reason (audience, issuer,
// expiry, signature) to the broker's log, so kql reads its own token's
// claims and says which look wrong relative to what it can know: the clock,
// the scope it asked for, the token endpoint's address, the sub claim the
// broker needs. The audience the broker expects is its
// sasl.oauthbearer.expected.audience, which no client can see; kql names the
// token's so the user can compare.
func (s *Source) Diagnose(t *Token) string {
	if t == nil {
		return "kql has no token to examine"
	}
	if t.Claims == nil {
		_, err := Claims(t.Raw)
		return fmt.Sprintf("the token is not a JWT kql can read (%v); Kafka's OAuthBearerValidatorCallbackHandler accepts only JWTs", err)
	}
	now := s.now()
	var wrong, facts []string
	const skew = 30 * time.Second // Kafka's default sasl.oauthbearer.clock.skew.seconds
	if exp, ok := numClaim(t.Claims, "exp"); ok {
		e := time.Unix(int64(exp), 0)
		if now.After(e.Add(skew)) {
			wrong = append(wrong, fmt.Sprintf("it expired at %s (%s ago)", e.UTC().Format(time.RFC3339), now.Sub(e).Round(time.Second)))
		} else {
			facts = append(facts, "exp "+e.UTC().Format(time.RFC3339))
		}
	} else {
		wrong = append(wrong, "it has no exp claim (the broker requires one)")
	}
	for _, c := range []string{"nbf", "iat"} {
		if v, ok := numClaim(t.Claims, c); ok && time.Unix(int64(v), 0).After(now.Add(skew)) {
			wrong = append(wrong, fmt.Sprintf("its %s claim %s is in the future (clock skew between kql, the token endpoint or the broker?)", c, time.Unix(int64(v), 0).UTC().Format(time.RFC3339)))
		}
	}
	if sub, ok := t.Claims[s.cfg.SubClaim].(string); !ok || sub == "" {
		wrong = append(wrong, fmt.Sprintf("it has no %q claim (the broker takes the principal from it: sasl.oauthbearer.sub.claim.name)", s.cfg.SubClaim))
	} else {
		facts = append(facts, fmt.Sprintf("%s %q", s.cfg.SubClaim, sub))
	}
	if iss, ok := t.Claims["iss"].(string); ok {
		// Not judged: many providers issue from another host than their
		// token endpoint's. Named, for comparing with the broker's
		// sasl.oauthbearer.expected.issuer.
		facts = append(facts, fmt.Sprintf("iss %q", iss))
	}
	scopeClaim, hasScope := t.Claims[s.cfg.ScopeClaim]
	scopes := claimStrings(scopeClaim, true)
	if !hasScope {
		// Not judged: many providers put no scope claim in the token, and
		// the broker needs none.
		facts = append(facts, fmt.Sprintf("no %q claim", s.cfg.ScopeClaim))
	} else if s.cfg.Scope != "" {
		var missing []string
		for _, want := range strings.Fields(s.cfg.Scope) {
			if !slices.Contains(scopes, want) {
				missing = append(missing, want)
			}
		}
		if len(missing) > 0 {
			wrong = append(wrong, fmt.Sprintf("its %q claim %v lacks the scope kql asked for (%s)", s.cfg.ScopeClaim, scopes, strings.Join(missing, " ")))
		}
	}
	if len(scopes) > 0 {
		facts = append(facts, fmt.Sprintf("%s %v", s.cfg.ScopeClaim, scopes))
	}
	aud := claimStrings(t.Claims["aud"], false)
	audText := "no aud claim"
	if len(aud) > 0 {
		audText = fmt.Sprintf("aud %v", aud)
	}
	var b strings.Builder
	b.WriteString("the broker refused kql's OAuth token (invalid_token; the broker's log has the reason)")
	if len(wrong) > 0 {
		b.WriteString(": what looks wrong: " + strings.Join(wrong, "; "))
	} else {
		b.WriteString(": nothing kql can check looks wrong (expiry, sub, scope)")
	}
	sort.Strings(facts)
	fmt.Fprintf(&b, "; the token has %s, which must be in the broker's sasl.oauthbearer.expected.audience if that is set", audText)
	if len(facts) > 0 {
		b.WriteString("; " + strings.Join(facts, ", "))
	}
	b.WriteString("; the broker also checks the issuer (sasl.oauthbearer.expected.issuer) and the signature (sasl.oauthbearer.jwks.endpoint.url)")
	return b.String()
}

// claimStrings reads a claim that is a string or a list of strings; a
// scope string is space-separated (RFC 8693), an aud string is one value.
func claimStrings(v any, split bool) []string {
	switch x := v.(type) {
	case string:
		if split {
			return strings.Fields(x)
		}
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			switch s := e.(type) {
			case string:
				out = append(out, s)
			case json.Number:
				out = append(out, s.String())
			}
		}
		return out
	}
	return nil
}
