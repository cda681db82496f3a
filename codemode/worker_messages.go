package codemode

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// readyBound bounds a worker's first message (Ready), before its script's
// Limits are known.
const readyBound = 1 << 10

// messageReader reads a worker's messages, one JSON line each, without
// keeping more than max bytes of one: a worker that writes a longer or an
// endless line fails, and the parent holds no more of it than max.
type messageReader struct {
	r   *bufio.Reader
	max int
}

func newMessageReader(r io.Reader) *messageReader {
	return &messageReader{r: bufio.NewReader(r), max: readyBound}
}

// read reads the next message into m. A line that the reader's buffer
// holds whole is decoded where it is, with no copy.
func (mr *messageReader) read(m *message) error {
	var line []byte
	for {
		chunk, err := mr.r.ReadSlice('\n')
		if len(line)+len(chunk) > mr.max {
			return &ScriptError{Message: fmt.Sprintf("the script's worker sent a message of more than %d bytes, and was stopped", mr.max), Bound: true}
		}
		if err == nil && line == nil {
			return json.Unmarshal(chunk, m)
		}
		line = append(line, chunk...)
		if err == nil {
			break
		}
		if err != bufio.ErrBufferFull {
			if err == io.EOF && len(line) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return json.Unmarshal(line, m)
}
