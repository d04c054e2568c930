package render

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// A few testify-style assertions. testify's assert package needs
// go.yaml.in/yaml/v3, which go.sum does not hold; these cover what the
// tests here use. require stops the test, assert carries on.
type checker struct{ fatal bool }

var (
	assert  = checker{fatal: false}
	require = checker{fatal: true}
)

func (c checker) fail(t *testing.T, what string, msg []any) {
	t.Helper()
	if len(msg) > 0 {
		if f, ok := msg[0].(string); ok {
			what += "\n" + fmt.Sprintf(f, msg[1:]...)
		}
	}
	if c.fatal {
		t.Fatal(what)
	}
	t.Error(what)
}

func (c checker) Equal(t *testing.T, want, got any, msg ...any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		c.fail(t, fmt.Sprintf("not equal:\nwant: %#v\ngot:  %#v", want, got), msg)
	}
}

func (c checker) True(t *testing.T, ok bool, msg ...any) {
	t.Helper()
	if !ok {
		c.fail(t, "should be true", msg)
	}
}

func (c checker) Contains(t *testing.T, s, sub string, msg ...any) {
	t.Helper()
	if !strings.Contains(s, sub) {
		c.fail(t, fmt.Sprintf("%q does not contain %q", s, sub), msg)
	}
}

func (c checker) NotContains(t *testing.T, s, sub string, msg ...any) {
	t.Helper()
	if strings.Contains(s, sub) {
		c.fail(t, fmt.Sprintf("%q contains %q", s, sub), msg)
	}
}

func (c checker) Len(t *testing.T, x any, n int, msg ...any) {
	t.Helper()
	if l := reflect.ValueOf(x).Len(); l != n {
		c.fail(t, fmt.Sprintf("length %d, want %d: %#v", l, n, x), msg)
	}
}

func (c checker) NoError(t *testing.T, err error, msg ...any) {
	t.Helper()
	if err != nil {
		c.fail(t, fmt.Sprintf("unexpected error: %v", err), msg)
	}
}

func (c checker) Error(t *testing.T, err error, msg ...any) {
	t.Helper()
	if err == nil {
		c.fail(t, "expected an error", msg)
	}
}

func (c checker) ErrorIs(t *testing.T, err, target error, msg ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		c.fail(t, fmt.Sprintf("error %v is not %v", err, target), msg)
	}
}

func (c checker) ErrorContains(t *testing.T, err error, sub string, msg ...any) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), sub) {
		c.fail(t, fmt.Sprintf("error %v does not contain %q", err, sub), msg)
	}
}

func (c checker) LessOrEqual(t *testing.T, a, b int, msg ...any) {
	t.Helper()
	if a > b {
		c.fail(t, fmt.Sprintf("%d > %d", a, b), msg)
	}
}

func (c checker) Less(t *testing.T, a, b int, msg ...any) {
	t.Helper()
	if a >= b {
		c.fail(t, fmt.Sprintf("%d >= %d", a, b), msg)
	}
}
