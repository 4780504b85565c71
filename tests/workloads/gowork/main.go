// A Go workload for tests/e2e/go.sh: three noinline functions on a hot
// path, and allocation enough that the garbage collector runs on its
// system stack (runtime.systemstack, runtime.mstart frames).
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

//go:noinline
func leaf(n int) float64 {
	s := 0.0
	for i := 0; i < n; i++ {
		s += float64(i%7) * 1.5
	}
	return s
}

//go:noinline
func middle(n int) float64 { return leaf(n) + leaf(n/2) }

//go:noinline
func top(n int) float64 { return middle(n) }

func main() {
	ms := 2000
	if len(os.Args) > 1 {
		ms, _ = strconv.Atoi(os.Args[1])
	}
	end := time.Now().Add(time.Duration(ms) * time.Millisecond)
	t := 0.0
	var garbage [][]byte
	for time.Now().Before(end) {
		t += top(200000)
		garbage = append(garbage, make([]byte, 4096))
		if len(garbage) > 1000 {
			garbage = nil
		}
	}
	fmt.Println(t > 0)
}
