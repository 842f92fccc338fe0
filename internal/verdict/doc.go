// Package verdict decides what a run record shows: each conversation's
// shape, the two arms' statistics, the sequential looks of --until-decided,
// and the outcome (verdict word, sentence and exit code) from one decision
// function, Decide. It reads only the record, so `vibe-test report` redoes
// it on saved runs and package calibrate pushes simulated records through
// it to measure how often it is wrong.
package verdict
