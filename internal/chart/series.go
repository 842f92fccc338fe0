package chart

// This file holds the echarts series types go-echarts has no field for:
// silent mark lines and areas, legend icons.

// lineSeries is a line series written by this package rather than
// go-echarts, for options go-echarts has no field for.
type lineSeries struct {
	Name         string      `json:"name"`
	Type         string      `json:"type"`
	Color        string      `json:"color"`
	LegendIcon   string      `json:"legendIcon,omitempty"`
	Symbol       string      `json:"symbol,omitempty"`
	SymbolSize   int         `json:"symbolSize,omitempty"`
	ShowSymbol   bool        `json:"showSymbol"`
	ConnectNulls bool        `json:"connectNulls"`
	Z            int         `json:"z,omitempty"`
	LineStyle    *lineStyle  `json:"lineStyle,omitempty"`
	Data         []item      `json:"data"`
	MarkLine     any         `json:"markLine,omitempty"`
	MarkPoint    *markPoints `json:"markPoint,omitempty"`
	MarkArea     *markArea   `json:"markArea,omitempty"`
	Animation    bool        `json:"animation"`
	Emphasis     *disabled   `json:"emphasis,omitempty"`
	Tooltip      *seriesShow `json:"tooltip,omitempty"`
}

type lineStyle struct {
	Color string  `json:"color,omitempty"`
	Width float64 `json:"width"`
	Type  string  `json:"type,omitempty"`
}

type disabled struct {
	Disabled bool `json:"disabled"`
}

type seriesShow struct {
	Show bool `json:"show"`
}

// markLine draws the error bars: silent, so that hovering a bar does not
// open a tooltip of bare numbers over the rate's own.
type markLine struct {
	Silent    bool         `json:"silent"`
	Symbol    []string     `json:"symbol"`
	Label     seriesShow   `json:"label"`
	LineStyle lineStyle    `json:"lineStyle"`
	Emphasis  disabled     `json:"emphasis"`
	Data      [][2]markEnd `json:"data"`
}

type markEnd struct {
	Coord [2]float64 `json:"coord"`
}

// markArea shades the filler turns.
type markArea struct {
	Silent    bool         `json:"silent"`
	ItemStyle itemStyle    `json:"itemStyle"`
	Label     markLabel    `json:"label"`
	Emphasis  disabled     `json:"emphasis"`
	Data      [][2]areaEnd `json:"data"`
}

type areaEnd struct {
	Name  string  `json:"name,omitempty"`
	XAxis float64 `json:"xAxis"`
}

// verticalLines are a markLine of whole-height lines at x values.
type verticalLines struct {
	Silent    bool      `json:"silent"`
	Symbol    []string  `json:"symbol"`
	LineStyle lineStyle `json:"lineStyle"`
	Label     markLabel `json:"label"`
	Emphasis  disabled  `json:"emphasis"`
	Data      []xLine   `json:"data"`
}

type xLine struct {
	XAxis float64    `json:"xAxis"`
	Label *markLabel `json:"label,omitempty"` // the markLine's when nil
}

// markPoints are a series' marks: escape pins, judge errors.
type markPoints struct {
	Data []any `json:"data"`
}

// arrowEnd is one end of a compaction's arrow.
type arrowEnd struct {
	Coord  [2]float64 `json:"coord"`
	Symbol string     `json:"symbol"`
}

// arrowLines are a markLine of arrows, one per compaction.
type arrowLines struct {
	Silent     bool          `json:"silent"`
	Symbol     []string      `json:"symbol"`
	SymbolSize int           `json:"symbolSize"`
	LineStyle  lineStyle     `json:"lineStyle"`
	Label      seriesShow    `json:"label"`
	Emphasis   disabled      `json:"emphasis"`
	Data       [][2]arrowEnd `json:"data"`
}
