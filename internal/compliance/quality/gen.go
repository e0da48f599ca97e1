package quality

//go:generate go run ./gen -out testdata
