"""Results: running a scenario's variants into a Result, its metrics, histograms, report text,
traces and the results directory."""
