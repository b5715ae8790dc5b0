package reference

// Table is one reference data set: a CSV file named Name + ".csv" with the
// header "formula,target".
type Table struct {
	// Name identifies the table; it is the file name without ".csv".
	Name string
	// Quantity says what the target column holds.
	Quantity string
	// Unit is the unit of the target; "" for a dimensionless quantity.
	Unit string
}

// File is the table's file name.
func (t Table) File() string { return t.Name + ".csv" }

// The tables Load reads (Materials Project data via Matbench and CrabNet;
// CC BY 4.0, cite Jain et al., APL Mater. 1, 011002 (2013) and Dunn et al.,
// npj Comput. Mater. 6, 138 (2020)).
var (
	FormationEnergy = Table{Name: "mp_e_form", Quantity: "formation energy per atom", Unit: "eV/atom"}
	EnergyAboveHull = Table{Name: "mp_e_hull", Quantity: "energy above the convex hull", Unit: "eV/atom"}
	BandGap         = Table{Name: "mp_gap", Quantity: "PBE band gap", Unit: "eV"}
	BulkModulus     = Table{Name: "mp_bulk_modulus", Quantity: "Voigt–Reuss–Hill bulk modulus", Unit: "GPa"}
	ShearModulus    = Table{Name: "mp_shear_modulus", Quantity: "Voigt–Reuss–Hill shear modulus", Unit: "GPa"}
	// Log10BulkModulus and Log10ShearModulus are Matbench's
	// matbench_log_kvrh and matbench_log_gvrh.
	Log10BulkModulus  = Table{Name: "mp_log10_bulk_modulus_vrh", Quantity: "log10 Voigt–Reuss–Hill bulk modulus", Unit: "log10(GPa)"}
	Log10ShearModulus = Table{Name: "mp_log10_shear_modulus_vrh", Quantity: "log10 Voigt–Reuss–Hill shear modulus", Unit: "log10(GPa)"}
	// RefractiveIndex is Matbench's matbench_dielectric: the refractive
	// index n, with ε∞ ≈ n².
	RefractiveIndex = Table{Name: "dielectric", Quantity: "refractive index", Unit: ""}
)

// tables is the list Load reads, in a fixed order.
var tables = []Table{
	FormationEnergy, EnergyAboveHull, BandGap,
	BulkModulus, ShearModulus, Log10BulkModulus, Log10ShearModulus,
	RefractiveIndex,
}

// Tables returns the tables Load reads.
func Tables() []Table { return append([]Table(nil), tables...) }
