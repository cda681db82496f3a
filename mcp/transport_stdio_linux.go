//go:build linux

package mcp

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"syscall"
)

// stdioMarkerEnv is the environment variable, set to a value unique to each
// stdio server process, by which the processes it starts are found when
// it is closed, even those that left its process group (setsid) or were
// orphaned when it died: they inherit the environment.
const stdioMarkerEnv = "TOOLKIT_MCP_STDIO_SERVER"

// newMarker returns the value of stdioMarkerEnv for a new server process.
func newMarker() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// procEntry is one process as /proc/PID/stat describes it.
type procEntry struct {
	pid, ppid int
	start     uint64 // start time in clock ticks since boot: tells a reused pid apart
	zombie    bool
}

// scanProcs lists the processes of the system.
func scanProcs() []procEntry {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]procEntry, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if e, ok := readStat(pid); ok {
			out = append(out, e)
		}
	}
	return out
}

// readStat reads /proc/PID/stat.
func readStat(pid int) (procEntry, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procEntry{}, false
	}
	return parseStat(pid, b)
}

// parseStat parses the content of /proc/PID/stat.
func parseStat(pid int, b []byte) (procEntry, bool) {
	// The command name, in parentheses, may hold anything: fields are
	// counted from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procEntry{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 { // state is field 3, ppid 4, starttime 22
		return procEntry{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	start, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil {
		return procEntry{}, false
	}
	return procEntry{pid: pid, ppid: ppid, start: start, zombie: f[0][0] == 'Z' || f[0][0] == 'X'}, true
}

// descendants returns the live descendants of pid by parent links, with
// their start times.
func descendants(pid int) map[int]uint64 {
	procs := scanProcs()
	children := map[int][]procEntry{}
	for _, e := range procs {
		children[e.ppid] = append(children[e.ppid], e)
	}
	out := map[int]uint64{}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if _, seen := out[c.pid]; !seen && !c.zombie {
				out[c.pid] = c.start
				queue = append(queue, c.pid)
			}
		}
	}
	return out
}

// killEscaped kills, with SIGKILL, what a closed stdio server left
// running outside its process group: the processes of tree (its
// descendants when Close began) that are still the same processes, and
// every process whose environment carries the server's marker. It scans
// again while it finds any, a few times at most (a process may start
// another as it is killed).
func killEscaped(marker string, tree map[int]uint64) {
	if marker == "" {
		return
	}
	want := []byte(stdioMarkerEnv + "=" + marker + "\x00")
	self := os.Getpid()
	for range 3 {
		killed := 0
		for _, e := range scanProcs() {
			if e.pid == self || e.zombie {
				continue
			}
			hit := false
			if start, ok := tree[e.pid]; ok && start == e.start {
				hit = true
			} else if env, err := os.ReadFile("/proc/" + strconv.Itoa(e.pid) + "/environ"); err == nil && bytes.Contains(env, want) {
				hit = true
			}
			if hit && syscall.Kill(e.pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
		if killed == 0 {
			return
		}
	}
}
