// Tiny real images (1 × 1 pixel), base64 inline, for tests of media parts: each decodes to a file
// `file(1)` recognises (a PNG, a GIF 89a, a JFIF JPEG, a lossless WebP).

/** A 1 × 1 image of each type a content part's image may have, base64, with its media type. */
export const TINY_IMAGES = {
  png: {
    mediaType: "image/png",
    data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
  },
  gif: { mediaType: "image/gif", data: "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7" },
  jpeg: {
    mediaType: "image/jpeg",
    data:
      "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////" +
      "////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=",
  },
  webp: { mediaType: "image/webp", data: "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==" },
} as const;
