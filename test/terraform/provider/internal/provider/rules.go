package provider

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A rule checks one known, non-null primitive value. name is the attribute's own name, which the
// real provider's SDKv2 validators quote in their messages; each returned string is one error.
// The rule constructors below reproduce the terraform-plugin-sdk/v2 helper/validation functions
// and the provider's own validators with their message texts.
type rule func(name string, v tftypes.Value) []string

func stringRule(f func(name, s string) []string) rule {
	return func(name string, v tftypes.Value) []string {
		var s string
		if !v.Type().Is(tftypes.String) || v.As(&s) != nil {
			return nil
		}
		return f(name, s)
	}
}

func intRule(f func(name string, n int64) []string) rule {
	return func(name string, v tftypes.Value) []string {
		var bf big.Float
		if !v.Type().Is(tftypes.Number) || v.As(&bf) != nil {
			return nil
		}
		n, _ := bf.Int64()
		return f(name, n)
	}
}

func errorsIf(failed bool, format string, args ...any) []string {
	if failed {
		return []string{fmt.Sprintf(format, args...)}
	}
	return nil
}

// anyOf passes when one rule passes, else reports every rule's errors (validation.Any).
func anyOf(rules ...rule) rule {
	return func(name string, v tftypes.Value) []string {
		var all []string
		for _, r := range rules {
			errs := r(name, v)
			if len(errs) == 0 {
				return nil
			}
			all = append(all, errs...)
		}
		return all
	}
}

// allOf reports the errors of every rule (validation.All).
func allOf(rules ...rule) rule {
	return func(name string, v tftypes.Value) []string {
		var all []string
		for _, r := range rules {
			all = append(all, r(name, v)...)
		}
		return all
	}
}

// oneOf is validation.StringInSlice(values, false), which enum.Validate also uses.
func oneOf(values ...string) rule {
	return stringRule(func(name, s string) []string {
		return errorsIf(!slices.Contains(values, s), "expected %s to be one of %q, got %s", name, values, s)
	})
}

// oneOfFold is validation.StringInSlice(values, true).
func oneOfFold(values ...string) rule {
	return stringRule(func(name, s string) []string {
		found := slices.ContainsFunc(values, func(x string) bool { return strings.EqualFold(x, s) })
		return errorsIf(!found, "expected %s to be one of %q, got %s", name, values, s)
	})
}

func intBetween(lo, hi int64) rule {
	return intRule(func(name string, n int64) []string {
		return errorsIf(n < lo || n > hi, "expected %s to be in the range (%d - %d), got %d", name, lo, hi, n)
	})
}

func intAtLeast(lo int64) rule {
	return intRule(func(name string, n int64) []string {
		return errorsIf(n < lo, "expected %s to be at least (%d), got %d", name, lo, n)
	})
}

func intAtMost(hi int64) rule {
	return intRule(func(name string, n int64) []string {
		return errorsIf(n > hi, "expected %s to be at most (%d), got %d", name, hi, n)
	})
}

func intInSlice(values ...int64) rule {
	return intRule(func(name string, n int64) []string {
		return errorsIf(!slices.Contains(values, n), "expected %s to be one of %v, got %d", name, values, n)
	})
}

func intDivisibleBy(d int64) rule {
	return intRule(func(name string, n int64) []string {
		return errorsIf(n%d != 0, "expected %s to be divisible by %d, got: %v", name, d, n)
	})
}

func stringLenBetween(lo, hi int) rule {
	return stringRule(func(name, s string) []string {
		return errorsIf(len(s) < lo || len(s) > hi, "expected length of %s to be in the range (%d - %d), got %s", name, lo, hi, s)
	})
}

func stringMatch(re *regexp.Regexp, message string) rule {
	return stringRule(func(name, s string) []string {
		return errorsIf(!re.MatchString(s), "invalid value for %s (%s)", name, message)
	})
}

func stringDoesNotMatch(re *regexp.Regexp, message string) rule {
	return stringRule(func(name, s string) []string {
		return errorsIf(re.MatchString(s), "invalid value for %s (%s)", name, message)
	})
}

// stringIsJSON is validation.StringIsJSON.
var stringIsJSON = stringRule(func(name, s string) []string {
	var x any
	if err := json.Unmarshal([]byte(s), &x); err != nil {
		return []string{fmt.Sprintf("%q contains an invalid JSON: %s", name, err)}
	}
	return nil
})

var (
	arnPartition = regexp.MustCompile(`^aws(-[a-z]+)*$`)
	arnRegion    = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d$`)
	arnAccountID = regexp.MustCompile(`^(aws|aws-managed|third-party|\d{12}|cw.{10})$`)
)

// validARN is verify.ValidARN (internal/verify/validate.go, ValidARNCheck) over the SDK's arn.Parse.
var validARN = stringRule(func(name, s string) []string {
	if s == "" {
		return nil
	}
	invalid := func(why string) string { return fmt.Sprintf("%q (%s) is an invalid ARN: %s", name, s, why) }
	if !strings.HasPrefix(s, "arn:") {
		return []string{invalid("arn: invalid prefix")}
	}
	parts := strings.SplitN(s, ":", 6)
	if len(parts) != 6 {
		return []string{invalid("arn: not enough sections")}
	}
	partition, region, account, resource := parts[1], parts[3], parts[4], parts[5]
	var errs []string
	if partition == "" {
		errs = append(errs, invalid("missing partition value"))
	} else if !arnPartition.MatchString(partition) {
		errs = append(errs, invalid("invalid partition value (expecting to match regular expression: "+arnPartition.String()+")"))
	}
	if region != "" && !arnRegion.MatchString(region) {
		errs = append(errs, invalid("invalid region value (expecting to match regular expression: "+arnRegion.String()+")"))
	}
	if account != "" && !arnAccountID.MatchString(account) {
		errs = append(errs, invalid("invalid account ID value (expecting to match regular expression: "+arnAccountID.String()+")"))
	}
	if resource == "" {
		errs = append(errs, invalid("missing resource value"))
	}
	return errs
})

// validIPv4CIDR is verify.ValidIPv4CIDRNetworkAddress.
var validIPv4CIDR = stringRule(func(_, s string) []string {
	ip, network, err := net.ParseCIDR(s)
	switch {
	case err != nil:
		return []string{fmt.Sprintf("%q is not a valid CIDR block: %s", s, err)}
	case ip.To4() == nil:
		return []string{fmt.Sprintf("%q is not a valid IPv4 CIDR block", s)}
	case network.String() != s:
		return []string{fmt.Sprintf("%q is not a valid IPv4 CIDR block; did you mean %q?", s, network)}
	}
	return nil
})

// validKMSKeyID is verify.ValidKMSKeyID.
var validKMSKeyID = stringRule(func(name, s string) []string {
	switch {
	case len(s) < 1:
		return []string{fmt.Sprintf("%q cannot be shorter than 1 character", name)}
	case len(s) > 2048:
		return []string{fmt.Sprintf("%q cannot be longer than 2048 characters", name)}
	}
	return nil
})

// validIAMPolicyJSON is verify.ValidIAMPolicyJSON: an object, no leading space; within maxLen when
// the resource adds a size quota (0: none).
func validIAMPolicyJSON(maxLen int) rule {
	return stringRule(func(name, s string) []string {
		switch {
		case s == "":
			return []string{fmt.Sprintf("%q is an empty string, which is not a valid JSON value", name)}
		case strings.ContainsAny(s[:1], " \t\r\n"):
			return []string{fmt.Sprintf("%q contains an invalid JSON policy: leading space characters are not allowed", name)}
		case s[0] == '"':
			return []string{fmt.Sprintf("%q contains an invalid JSON policy: contains a JSON-encoded string, not a JSON-encoded object", name)}
		case s[0] == '[':
			return []string{fmt.Sprintf("%q contains an invalid JSON policy: contains a JSON array, not a JSON object", name)}
		case s[0] != '{':
			return []string{fmt.Sprintf("%q contains an invalid JSON policy: not a JSON object", name)}
		}
		var x any
		if err := json.Unmarshal([]byte(s), &x); err != nil {
			return []string{fmt.Sprintf("%q contains an invalid JSON policy: %s", name, err)}
		}
		normalized, _ := json.Marshal(x)
		return errorsIf(maxLen > 0 && len(normalized) > maxLen, "Cannot exceed quota for PolicySize: %d (actual: %d)", maxLen, len(normalized))
	})
}

// matchChecks builds a validator from (pattern, must match, message) checks, each message
// formatted with the attribute name, as the provider's hand-written validators are.
type patternCheck struct {
	re      *regexp.Regexp
	match   bool
	message string
}

func patternChecks(maxLen int, lengthMessage string, checks ...patternCheck) rule {
	return stringRule(func(name, s string) []string {
		var errs []string
		for _, c := range checks {
			if c.re.MatchString(s) != c.match {
				errs = append(errs, fmt.Sprintf(c.message, name))
			}
		}
		if maxLen > 0 && len(s) > maxLen {
			errs = append(errs, fmt.Sprintf(lengthMessage, name))
		}
		return errs
	})
}

func must(pattern, message string) patternCheck {
	return patternCheck{regexp.MustCompile(pattern), true, message}
}

func mustNot(pattern, message string) patternCheck {
	return patternCheck{regexp.MustCompile(pattern), false, message}
}
