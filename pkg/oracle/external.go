package oracle

import (
	"context"
	"fmt"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/modelserver"
	"github.com/crucible-sci/crucible/pkg/task"
)

// SourcePlugin: predicted by a plug-in model server (pkg/modelserver).
const SourcePlugin Source = "plugin"

// ReasonPlugin (warning): a plug-in gave no value for the structure; the
// detail starts with the plug-in's reason (timeout, unsupported_element, …).
const ReasonPlugin crystal.ReasonCode = "plugin"

// External is a property model outside the oracle, a plug-in model server:
// one value or error per structure, in order. An implementation over NATS
// request/reply is internal/modelclient's Client.
type External interface {
	Model() modelserver.Model
	Predict(ctx context.Context, structs []*crystal.Structure) []modelserver.Value
}

// completeExternal asks the plug-ins for the properties the requests name,
// one batch per plug-in, and adds their values to the predicted results.
// A value the oracle has from another source (a reference value) is kept;
// the plug-in's is then reported beside it.
func (o *Oracle) completeExternal(ctx context.Context, reqs []Request, results []Result) {
	for _, ext := range o.opts.External {
		m := ext.Model()
		var structs []*crystal.Structure
		var which []int
		for i, req := range reqs {
			if results[i].Predicted && wants(req)[m.Property] {
				structs = append(structs, req.Structure)
				which = append(which, i)
			}
		}
		if len(structs) == 0 {
			continue
		}
		vals := ext.Predict(ctx, structs)
		for k, i := range which {
			res := &results[i]
			v := vals[k]
			if v.Err != nil {
				res.Warnings = append(res.Warnings, Reason{Code: ReasonPlugin,
					Detail: fmt.Sprintf("%s from %s: %v", m.Property, m.Endpoint, v.Err)})
				continue
			}
			pv := Value{Value: v.Value, Unit: task.UnitOf(m.Property), Source: SourcePlugin, Uncertainty: v.Uncertainty}
			if old, ok := res.Properties[m.Property]; ok && old.Source == SourceReference {
				old.Surrogate = &pv.Value
				res.Properties[m.Property] = old
				continue
			}
			res.Properties[m.Property] = pv
		}
	}
}
