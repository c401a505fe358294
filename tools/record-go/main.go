// The signature record's second opinion: Go's golang.org/x/mod/sumdb/note and sumdb/tlog (the checksum database's
// own code, written by nobody here) read our checkpoints and check our Merkle roots and proofs. test/record/go-sumdb.test.ts
// builds it once per run and asks it everything in one batch: a JSON request on stdin, a JSON answer on stdout.
//
// Built offline from Debian's packages golang-go and golang-golang-x-mod-dev (no module download):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$(mktemp -d) go build -o record-go .
//
// The request: {"leaves": ["line", ...], "requests": [{"op": ..., ...}, ...]}. The leaves are the record's leaf
// data (its entries' lines without the newline); the tree of size n is the tree of the first n of them. Ops, with
// the fields they read (hashes in base64, indexes from 0):
//
//	open         text, key      note.Open of the checkpoint text with note.NewVerifier(key): origin, size, root, lines
//	root         size           tlog.TreeHash of the first size leaves: root (32 zero bytes for none, not SHA-256 of nothing)
//	proveRecord  size, index    tlog.ProveRecord: the inclusion proof of leaf index in the tree of size leaves
//	proveTree    size, old      tlog.ProveTree: the consistency proof from the tree of old leaves to that of size
//	checkRecord  proof, size, root, index, leaf      tlog.CheckRecord: ok, or the error
//	checkTree    proof, size, root, old, oldRoot     tlog.CheckTree: ok, or the error
//	stored       (none)         every hash tlog.StoredHashes stored for the leaves, in its order (in "proof")
//
// The answer: {"answers": [...]}, one object per request in order, carrying "error" when Go refused it.
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type request struct {
	Op      string   `json:"op"`
	Text    string   `json:"text"`
	Key     string   `json:"key"`
	Size    int64    `json:"size"`
	Index   int64    `json:"index"`
	Old     int64    `json:"old"`
	Root    string   `json:"root"`
	OldRoot string   `json:"oldRoot"`
	Leaf    string   `json:"leaf"`
	Proof   []string `json:"proof"`
}

type answer struct {
	Error  string   `json:"error,omitempty"`
	OK     bool     `json:"ok,omitempty"`
	Origin string   `json:"origin,omitempty"`
	Size   *int64   `json:"size,omitempty"`
	Root   string   `json:"root,omitempty"`
	Lines  []string `json:"lines,omitempty"`
	Proof  []string `json:"proof,omitempty"`
}

// store holds tlog's stored hashes of the leaves (every complete subtree's hash, in tlog's order).
type store []tlog.Hash

func (s store) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(s)) {
			return nil, fmt.Errorf("stored hash %d is not there (%d stored)", x, len(s))
		}
		out[i] = s[x]
	}
	return out, nil
}

func hashOf(b64 string) (tlog.Hash, error) {
	var h tlog.Hash
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return h, err
	}
	if len(raw) != len(h) {
		return h, fmt.Errorf("a hash is %d bytes, not %d", len(raw), len(h))
	}
	copy(h[:], raw)
	return h, nil
}

func hashesOf(list []string) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(list))
	for i, b64 := range list {
		h, err := hashOf(b64)
		if err != nil {
			return nil, err
		}
		out[i] = h
	}
	return out, nil
}

func encode(hashes []tlog.Hash) []string {
	out := make([]string, len(hashes))
	for i, h := range hashes {
		out[i] = base64.StdEncoding.EncodeToString(h[:])
	}
	return out
}

// open verifies a checkpoint as note.Open does, then reads origin, size and root from the verified text.
func open(r request) answer {
	v, err := note.NewVerifier(r.Key)
	if err != nil {
		return answer{Error: "verifier key: " + err.Error()}
	}
	n, err := note.Open([]byte(r.Text), note.VerifierList(v))
	if err != nil {
		return answer{Error: err.Error()}
	}
	lines := strings.Split(strings.TrimSuffix(n.Text, "\n"), "\n")
	if len(lines) < 3 {
		return answer{Error: "not a checkpoint: fewer than 3 lines", Lines: lines}
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 {
		return answer{Error: "not a checkpoint: the size " + strconv.Quote(lines[1]), Lines: lines}
	}
	root, err := hashOf(lines[2])
	if err != nil {
		return answer{Error: "not a checkpoint: the root: " + err.Error(), Lines: lines}
	}
	return answer{Origin: lines[0], Size: &size, Root: base64.StdEncoding.EncodeToString(root[:]), Lines: lines}
}

// proved answers a proof tlog made, or its error.
func proved(p []tlog.Hash, err error) answer {
	if err != nil {
		return answer{Error: err.Error()}
	}
	return answer{Proof: encode(p)}
}

// checked answers ok when tlog accepted a proof, else its error.
func checked(err error) answer {
	if err != nil {
		return answer{Error: err.Error()}
	}
	return answer{OK: true}
}

func run(r request, s store) answer {
	switch r.Op {
	case "open":
		return open(r)
	case "root":
		h, err := tlog.TreeHash(r.Size, s)
		if err != nil {
			return answer{Error: err.Error()}
		}
		return answer{Root: base64.StdEncoding.EncodeToString(h[:])}
	case "stored":
		return answer{Proof: encode(s)}
	case "proveRecord":
		return proved(tlog.ProveRecord(r.Size, r.Index, s))
	case "proveTree":
		return proved(tlog.ProveTree(r.Size, r.Old, s))
	case "checkRecord", "checkTree":
		other := r.Leaf
		if r.Op == "checkTree" {
			other = r.OldRoot
		}
		// The root, the leaf's hash (or the old tree's root), then the proof's hashes.
		h, err := hashesOf(append([]string{r.Root, other}, r.Proof...))
		if err != nil {
			return answer{Error: "the request's hashes: " + err.Error()}
		}
		if r.Op == "checkRecord" {
			return checked(tlog.CheckRecord(h[2:], r.Size, h[0], r.Index, h[1]))
		}
		return checked(tlog.CheckTree(h[2:], r.Size, h[0], r.Old, h[1]))
	}
	return answer{Error: "unknown op " + strconv.Quote(r.Op)}
}

func main() {
	var in struct {
		Leaves   []string  `json:"leaves"`
		Requests []request `json:"requests"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, "record-go: the request is not JSON of the expected shape:", err)
		os.Exit(2)
	}
	// tlog stores the hashes of a growing log: leaf i's (and the subtrees it completes) after those of the leaves before it.
	var s store
	for i, leaf := range in.Leaves {
		hashes, err := tlog.StoredHashes(int64(i), []byte(leaf), s)
		if err != nil {
			fmt.Fprintln(os.Stderr, "record-go: storing leaf", i, ":", err)
			os.Exit(1)
		}
		s = append(s, hashes...)
	}
	out := struct {
		Answers []answer `json:"answers"`
	}{make([]answer, len(in.Requests))}
	for i, r := range in.Requests {
		out.Answers[i] = run(r, s)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "record-go:", err)
		os.Exit(1)
	}
}
