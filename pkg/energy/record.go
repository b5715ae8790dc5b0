package energy

// RelaxationRecord is a relaxation as "crucible predict --relax --json"
// reports it: null energies when they could not be computed.
type RelaxationRecord struct {
	Converged     bool     `json:"converged"`
	Steps         int      `json:"steps"`
	EnergyPerAtom float64  `json:"energy_per_atom"`
	EForm         *float64 `json:"formation_energy_per_atom"`
	EHull         *float64 `json:"e_above_hull"`
}

// Record is the relaxation as a RelaxationRecord; nil for nil.
func (r *Relaxed) Record() *RelaxationRecord {
	if r == nil {
		return nil
	}
	rec := &RelaxationRecord{Converged: r.Converged, Steps: r.Steps, EnergyPerAtom: r.EnergyPerAtom}
	if r.Formation != nil {
		rec.EForm = &r.Formation.EnergyPerAtom
	}
	if r.Stability != nil {
		rec.EHull = &r.Stability.EAboveHull
	}
	return rec
}
