package suite

// GoTestCommand is goTestCommand, for the tests.
var GoTestCommand = goTestCommand

// ReproArgs is reproArgs, for the tests.
var ReproArgs = reproArgs
