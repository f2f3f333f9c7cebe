/* file_kind.h — what kind of file a path holds, as upstream decides it: binaryornot's text/binary
 * guess, the Office/PDF/audio files the editor may only view, the media read returns as data:
 * URLs. */
#ifndef SP_FILE_KIND_H
#define SP_FILE_KIND_H

/* binaryornot's is_binary(): heuristics over the first 1024 bytes; false if unreadable. */
int fa_is_binary(const char *abs_path);

/* Whether path names one of the binary files the OHEditor converts for `view` only (.docx,
 * .xlsx, .pptx, .pdf, .mp3, .wav, .m4a, .flac; case-insensitive suffix). */
int fa_is_supported_binary(const char *path);

/* The MIME type (mimetypes.guess_type's answer) of a media file the read action returns as a
 * data: URL (.png, .jpg, .pdf, .mp4, ...; case-insensitive), or NULL for any other path. */
const char *fa_media_type(const char *path);

#endif
