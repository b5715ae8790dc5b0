package pipeline

import (
	"fmt"
	"io"
	"strconv"
)

// Write writes the report as text: every round, the round with the median
// ratio with its CPU accounting, and the scaling table.
func (r *Report) Write(w io.Writer) {
	fmt.Fprintf(w, "GOMAXPROCS %d, oracle workers %s\n", r.GOMAXPROCS, workersText(r.Workers))
	if len(r.Rounds) > 1 {
		for i, x := range r.Rounds {
			fmt.Fprintf(w, "round %d: (a) %8.1f structures/s, (b) %8.1f evaluations/s = %.0f%% (oracle busy %.0f%%, at %.0f%% speed)%s\n", i+1, x.OracleRate, x.PipelineRate, 100*x.PipelineRatio, 100*x.OracleBusy, 100*x.OracleSpeed, stealText(x.OracleSteal, x.Steal))
		}
		fmt.Fprintf(w, "the round with the median ratio:\n")
	}
	fmt.Fprintf(w, "(a) oracle alone:            %8.1f structures/s\n", r.OracleRate)
	fmt.Fprintf(w, "(b) pipeline, 1 evaluator:   %8.1f evaluations/s  = %.0f%% of (a)\n", r.PipelineRate, 100*r.PipelineRatio)
	if r.CPUPerEvaluation > 0 {
		fmt.Fprintf(w, "    CPU per evaluation %.2f ms (oracle %.2f ms, services and brokers %.2f ms); %.2f of %d cores busy\n",
			r.CPUPerEvaluation, r.OracleCPUPerEvaluation, r.CPUPerEvaluation-r.OracleCPUPerEvaluation, r.CoresBusy, r.GOMAXPROCS)
		fmt.Fprintf(w, "    heap allocated per evaluation %.0f KiB (the whole process)\n", r.AllocPerEvaluation)
	}
	if r.OracleBusy > 0 {
		fmt.Fprintf(w, "    the evaluator's oracle worked %.0f%% of the time, at %.0f%% of its speed in (a)\n", 100*r.OracleBusy, 100*r.OracleSpeed)
	}
	if r.Steal != nil && r.OracleSteal != nil {
		fmt.Fprintf(w, "    the hypervisor took %.0f%% of the machine's CPU time during (a), %.0f%% during (b) (steal)\n", 100**r.OracleSteal, 100**r.Steal)
	}
	fmt.Fprintf(w, "(c) oracle delay %s per candidate:\n", r.Delay)
	fmt.Fprintf(w, "    evaluators  evaluations/s  speed-up  efficiency  cores busy  steal\n")
	for _, p := range r.Scaling {
		steal := "     -"
		if p.Steal != nil {
			steal = fmt.Sprintf("%5.0f%%", 100**p.Steal)
		}
		fmt.Fprintf(w, "    %10d  %13.1f  %7.2fx  %9.0f%%  %10.2f  %s\n", p.Evaluators, p.Rate, p.Speedup, 100*p.Efficiency, p.CoresBusy, steal)
	}
	if worst := r.worstSteal(); worst > stealWarning {
		fmt.Fprintf(w, "warning: the hypervisor took up to %.0f%% of the machine's CPU time (steal) during these runs; wall-clock rates, and ratios of rates measured at different times, move with it whatever the program does: compare figures measured while it stays near 0\n", 100*worst)
	}
}

// stealWarning is the share of stolen CPU time above which the report
// warns that its rates are not comparable.
const stealWarning = 0.05

// worstSteal is the largest share of stolen CPU time of any measurement.
func (r *Report) worstSteal() float64 {
	var worst float64
	for _, x := range r.Rounds {
		for _, s := range []*float64{x.OracleSteal, x.Steal} {
			if s != nil {
				worst = max(worst, *s)
			}
		}
	}
	for _, p := range r.Scaling {
		if p.Steal != nil {
			worst = max(worst, *p.Steal)
		}
	}
	return worst
}

// stealText is a round's stolen shares of CPU time, when reported.
func stealText(a, b *float64) string {
	if a == nil || b == nil {
		return ""
	}
	return fmt.Sprintf(", steal (a) %.0f%% (b) %.0f%%", 100**a, 100**b)
}

func workersText(n int) string {
	if n == 0 {
		return "one per CPU"
	}
	return strconv.Itoa(n)
}
