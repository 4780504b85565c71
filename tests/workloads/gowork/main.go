// A Go workload for tests/e2e/go.sh: three noinline functions on a hot
// path, and allocation enough that the garbage collector runs on its
// system stack (runtime.systemstack, runtime.mstart frames).
//
// Usage: gowork [MILLISECONDS]   (CPU time to burn, all threads; default 2000)
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used, every thread's: what
// perf's cpu-clock samples.  A budget of wall time made as few samples as
// the machine's load left it CPU (go.sh counted 1151 frames where 500 are
// needed, with other tests running beside it).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

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
	budget := time.Duration(ms) * time.Millisecond
	t := 0.0
	var garbage [][]byte
	for cpuTime() < budget {
		t += top(200000)
		garbage = append(garbage, make([]byte, 4096))
		if len(garbage) > 1000 {
			garbage = nil
		}
	}
	fmt.Println(t > 0)
}
