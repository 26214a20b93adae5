// gogzip: gzip stdin to stdout at BestCompression with Go's compress/gzip, the compressor Butane uses.
// The reference the Python port in butane/goflate.py is checked against.
package main

import (
	"compress/gzip"
	"io"
	"os"
)

func main() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		os.Exit(2)
	}
	w, err := gzip.NewWriterLevel(os.Stdout, gzip.BestCompression)
	if err != nil {
		os.Exit(2)
	}
	if _, err := w.Write(data); err != nil {
		os.Exit(2)
	}
	if err := w.Close(); err != nil {
		os.Exit(2)
	}
}
