module github.com/ptxprop/ptxprop

go 1.26

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	gonum.org/v1/gonum v0.17.0
	pgregory.net/rapid v1.3.0
)

require golang.org/x/text v0.23.0 // indirect
