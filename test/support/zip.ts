import { buffer } from 'node:stream/consumers';
import yauzl from 'yauzl';

/** Every entry of a zip file, read whole: for tests, which search entries for what must not be there. */
export interface ReadEntry {
  name: string;
  data: Buffer;
  compressionMethod: number;
}

export async function readZip(path: string): Promise<ReadEntry[]> {
  const zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false });
  const read: ReadEntry[] = [];
  try {
    for (;;) {
      const entry = await new Promise<yauzl.Entry | undefined>((resolve, reject) => {
        zip.once('entry', resolve);
        zip.once('end', () => resolve(undefined));
        zip.once('error', reject);
        zip.readEntry();
      });
      zip.removeAllListeners();
      if (entry === undefined) return read;
      const isDirectory = entry.fileName.endsWith('/');
      const data = isDirectory ? Buffer.alloc(0) : await buffer(await zip.openReadStreamPromise(entry));
      read.push({ name: entry.fileName, data, compressionMethod: entry.compressionMethod });
    }
  } finally {
    zip.close();
  }
}

