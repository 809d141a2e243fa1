package suite

// GoTestCommand is goTestCommand, for the tests.
var GoTestCommand = goTestCommand
