/* zip_write.h — a streaming .zip writer: every byte goes to a sink as soon as it is produced,
 * so an archive of any size needs only one entry's deflate state and the central directory
 * (a few dozen bytes per entry) in memory. Each entry is a local header with flag 3 (sizes in
 * a data descriptor after the data), its data (deflated or stored), the descriptor; the
 * central directory and end record close the archive. No zip64: the archive must stay under
 * 4 GiB and 65,535 entries (errors say so). */
#ifndef SP_ZIP_WRITE_H
#define SP_ZIP_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "err.h"

/* Receives the archive's bytes in order. Returns 0, or < 0 to fail the writer (the value is
 * returned by the call that was writing). */
typedef int (*zip_sink_fn)(void *ud, const void *p, size_t n);

typedef struct zip_writer zip_writer_t;

/* level 0 stores entries as they are; 1..9 deflates them at that zlib level. */
zip_writer_t *zip_writer_new(zip_sink_fn sink, void *ud, int level);
void zip_writer_free(zip_writer_t *w);

/* Starts an entry and writes its local header. name is the path inside the archive ('/'
 * separated, relative, UTF-8); a name ending in '/' is a directory (no data). mode holds the
 * permission bits (0644 when 0), mtime the modification time. Returns 0 or < 0 with err set:
 * bad name, an entry already open, over the zip limits, or the sink failed. */
int zip_writer_begin(zip_writer_t *w, const char *name, uint32_t mode, time_t mtime, err_t *err);
/* Adds n bytes of the open entry's data. */
int zip_writer_write(zip_writer_t *w, const void *p, size_t n, err_t *err);
/* Ends the open entry: flushes its data and writes the data descriptor. */
int zip_writer_end(zip_writer_t *w, err_t *err);
/* Writes the central directory and the end record (an open entry is ended first). The writer
 * takes no more entries afterwards. */
int zip_writer_finish(zip_writer_t *w, err_t *err);

/* Bytes handed to the sink so far. */
uint64_t zip_writer_offset(const zip_writer_t *w);

#endif
