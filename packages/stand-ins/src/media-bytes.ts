import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

/*
 * Deterministic media for the stand-in node: real enough to decode (the PNG and the WAV are
 * valid files), small enough to keep tests fast. Same seed, same bytes.
 */

const PNG_SIDE_PX = 8;

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** An 8x8 PNG in one colour taken from the seed. */
export function standInPng(seed: string): Buffer {
  const [red = 0, green = 0, blue = 0] = createHash('sha256').update(seed).digest();
  const header = Buffer.alloc(13);
  header.writeUInt32BE(PNG_SIDE_PX, 0);
  header.writeUInt32BE(PNG_SIDE_PX, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit depth, RGB, default compression/filter, no interlace
  const row = Buffer.concat([
    Buffer.from([0]),
    Buffer.from(Array.from({ length: PNG_SIDE_PX }, () => [red, green, blue]).flat()),
  ]);
  const pixels = Buffer.concat(Array.from({ length: PNG_SIDE_PX }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(pixels)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Pseudo-random bytes from a seed (SHA-256 in counter mode). */
export function seededBytes(seed: string, length: number): Buffer {
  const blocks: Buffer[] = [];
  for (let counter = 0; blocks.length * 32 < length; counter += 1) {
    blocks.push(createHash('sha256').update(`${seed}:${counter}`).digest());
  }
  return Buffer.concat(blocks).subarray(0, length);
}

const WAV_SAMPLE_RATE_HZ = 8_000;

/** A mono 8-bit WAV file whose samples come from the seed. */
export function standInWav(seed: string, sampleCount: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + sampleCount, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(WAV_SAMPLE_RATE_HZ, 24);
  header.writeUInt32LE(WAV_SAMPLE_RATE_HZ, 28); // byte rate: 1 byte per sample
  header.writeUInt16LE(1, 32); // block align
  header.writeUInt16LE(8, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(sampleCount, 40);
  return Buffer.concat([header, seededBytes(seed, sampleCount)]);
}

export const AUDIO_CONTENT_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** Audio in the asked format: a real WAV for wav, seeded bytes behind a format tag otherwise. */
export function standInAudio(seed: string, format: string, byteCount: number): Buffer {
  if (format === 'wav') return standInWav(seed, byteCount);
  const tag = Buffer.from(`STAND-IN ${format.toUpperCase()} `, 'ascii');
  return Buffer.concat([tag, seededBytes(seed, byteCount)]);
}

/** Bytes served for a generated video; not a playable MP4, tagged so nobody mistakes it. */
export function standInVideo(seed: string): Buffer {
  return Buffer.concat([Buffer.from('STAND-IN MP4 ', 'ascii'), seededBytes(seed, 4_096)]);
}
