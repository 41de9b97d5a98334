const isContinuation = (byte: number) => (byte & 0xc0) === 0x80;

/** How many bytes the UTF-8 character led by `byte` has (1 for a byte that leads none). */
function sequenceLength(byte: number): number {
  if (byte >= 0xc2 && byte <= 0xdf) return 2;
  if (byte >= 0xe0 && byte <= 0xef) return 3;
  if (byte >= 0xf0 && byte <= 0xf4) return 4;
  return 1;
}

/**
 * Whether `byte` may be the byte at `position` (1: the one after the lead) of the character `lead`
 * begins, as a UTF-8 decoder reads it: after E0, ED, F0 and F4 the second byte has a narrower range
 * (no overlong forms, no surrogates, nothing past U+10FFFF).
 */
function continues(lead: number, position: number, byte: number): boolean {
  if (position === 1) {
    if (lead === 0xe0) return byte >= 0xa0 && byte <= 0xbf;
    if (lead === 0xed) return byte >= 0x80 && byte <= 0x9f;
    if (lead === 0xf0) return byte >= 0x90 && byte <= 0xbf;
    if (lead === 0xf4) return byte >= 0x80 && byte <= 0x8f;
  }
  return isContinuation(byte);
}

/**
 * Where the UTF-8 character that `at` splits in `bytes` begins (a lead byte at most 3 bytes back)
 * and ends, as a decoder reads it: from the lead, as far as each byte may continue it (a byte that
 * may not — `E0 80` — ends it, and is read on its own, so nothing is split before it); past the end
 * of `bytes`, as far as the lead says. `undefined` when `at` splits none. Never looks further back:
 * a long run of stray continuation bytes is invalid anyway, each of them U+FFFD on its own.
 */
export function splitCharacter(bytes: Uint8Array, at: number): { start: number; end: number } | undefined {
  if (at <= 0 || at >= bytes.length || !isContinuation(bytes[at] as number)) return undefined;
  for (let back = at - 1; back >= 0 && back >= at - 3; back--) {
    const lead = bytes[back] as number;
    if (isContinuation(lead)) continue;
    const length = sequenceLength(lead);
    let end = back + 1;
    while (end < back + length) {
      if (end >= bytes.length) {
        end = back + length;
        break;
      }
      if (!continues(lead, end - back, bytes[end] as number)) break;
      end++;
    }
    return end > at ? { start: back, end } : undefined;
  }
  return undefined;
}

/** `at`, or the start of the UTF-8 character it would split. */
function utf8Boundary(bytes: Uint8Array, at: number): number {
  return splitCharacter(bytes, Math.min(at, bytes.length))?.start ?? Math.min(at, bytes.length);
}

/** Bytes decoded at a time by {@link fitUtf8}. */
const FIT_BLOCK_BYTES = 4_096;

/**
 * The longest start of `bytes` that ends between two characters and whose text — decoded, each
 * invalid byte as U+FFFD, 3 bytes in UTF-8 — is at most `room` bytes of UTF-8: the text, and how many
 * of `bytes` it took. Decoded a block at a time (blocks end between characters, so they decode as
 * the whole would), and the block where the room ends by bisection: time linear in `room`.
 */
export function fitUtf8(bytes: Uint8Array, room: number): { text: string; taken: number } {
  const pieces: string[] = [];
  let used = 0;
  let taken = 0;
  const decode = (from: number, to: number) => new TextDecoder().decode(bytes.subarray(from, to));
  while (taken < bytes.length) {
    const end = utf8Boundary(bytes, taken + FIT_BLOCK_BYTES);
    const piece = decode(taken, end);
    const size = Buffer.byteLength(piece);
    if (used + size <= room) {
      pieces.push(piece);
      used += size;
      taken = end;
      continue;
    }
    // The room ends in this block: the last cut between characters in it that fits.
    let low = taken;
    let high = end;
    let best = "";
    while (high - low > 1) {
      const middle = (low + high) >>> 1;
      // A cut between characters near the middle: before the character the middle splits, or after
      // it when that one starts at `low`.
      const split = splitCharacter(bytes, middle);
      const cut = split === undefined ? middle : split.start > low ? split.start : split.end;
      if (cut >= high) break;
      const candidate = decode(taken, cut);
      if (used + Buffer.byteLength(candidate) <= room) {
        low = cut;
        best = candidate;
      } else high = cut;
    }
    pieces.push(best);
    taken = low;
    break;
  }
  return { text: pieces.join(""), taken };
}
