package chart

// This file formats numbers and text for tooltips and labels.

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/vibe-test/vibe-test/internal/plan"
)

// percent formats a 0..1 share as a whole percentage.
func percent(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

// points is a difference of two rates, as the summary writes it: "+50
// points", not "50%", which could be read as half of the fresh rate.
func points(x float64) string { return fmt.Sprintf("%+.0f points", 100*x) }

func kindName(kind string) string {
	if kind == plan.KindBase {
		return "baseline"
	}
	return kind
}

// escBraces stops echarts from expanding {a}, {b}, {@name}… in untrusted
// text: a tooltip formatter string is a template before it is HTML.
var escBraces = strings.NewReplacer("{", "&#123;", "}", "&#125;")

// esc makes untrusted text inert in a tooltip, which echarts sets as HTML:
// markup is escaped, template braces are escaped, newlines are kept.
func esc(s string) string {
	s = escBraces.Replace(html.EscapeString(s))
	return strings.ReplaceAll(s, "\n", "<br/>")
}

// thousands formats n as 31,234.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
