package properties

// Every contract runs on whichever backend -backend selects; register them.
import _ "github.com/ptxprop/ptxprop/cudart/backends"
