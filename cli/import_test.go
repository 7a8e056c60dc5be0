package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/vmihailenco/msgpack/v5"

	"landslide/store"
)

// bombArchive writes an archive of a few KiB (magic, version, chunks of
// one zstd stream, trailer: doc.go) whose record stream holds 64 MiB of
// zeros: a run record, then a frontier of zeros.
func bombArchive(t *testing.T) string {
	t.Helper()
	id := "0123456789ab"
	rv, err := msgpack.Marshal(&store.Run{ID: id, Command: "explore", Program: "p"})
	if err != nil {
		t.Fatal(err)
	}
	var recs bytes.Buffer
	add := func(kind byte, k string, v []byte) {
		recs.WriteByte(kind)
		recs.Write(binary.AppendUvarint(nil, uint64(len(k))))
		recs.WriteString(k)
		recs.Write(binary.AppendUvarint(nil, uint64(len(v))))
		recs.Write(v)
	}
	add(1, "run/"+id, append([]byte{0}, rv...))
	add(4, "front/"+id+"/00000000", make([]byte, 64<<20))
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	z := enc.EncodeAll(recs.Bytes(), nil)
	var arc bytes.Buffer
	arc.WriteString("LANDSLIDE-ARCHIVE\n")
	arc.Write(binary.BigEndian.AppendUint32(nil, store.ArchiveVersion))
	for len(z) > 0 {
		n := min(len(z), 256<<10)
		arc.Write(binary.BigEndian.AppendUint32(nil, uint32(n)))
		arc.Write(z[:n])
		z = z[n:]
	}
	arc.Write(binary.BigEndian.AppendUint32(nil, 0))
	sum := sha256.Sum256(arc.Bytes())
	arc.Write(binary.BigEndian.AppendUint64(nil, 2))
	arc.Write(sum[:])
	path := filepath.Join(t.TempDir(), "bomb.lsa")
	if err := os.WriteFile(path, arc.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestImportBomb: an archive of a few KiB that decompresses to 64 MiB
// (within the absolute limits) is refused at its expansion bound, in one
// line, exit 2, and nothing of it is written.
func TestImportBomb(t *testing.T) {
	path := bombArchive(t)
	fi, err := os.Stat(path)
	if err != nil || fi.Size() > 64<<10 {
		t.Fatalf("the bomb: %v, %d bytes", err, fi.Size())
	}
	dir := t.TempDir()
	code, out, errOut := storeCLI(dir, "import", path)
	if code != ExitUsage || !strings.Contains(errOut, path+": not imported: invalid archive: ") || !strings.Contains(errOut, "decompresses past") {
		t.Fatalf("import of the bomb: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := storeCLI(dir, "ls", "--json"); code != ExitOK || strings.TrimSpace(out) != "[]" {
		t.Errorf("the store after the refused import: exit %d\n%s", code, out)
	}
}
