/**
 * A result's artifacts as the checkly CLI's `assets list` and `assets
 * download` read them: each uploaded artifact with its kind and its signed
 * download link. Artifacts the agent could not upload have no bytes to
 * fetch and are left out.
 */
import Type from 'typebox';
import type { ArtifactEntry } from './result-records.js';

export const ASSET_TYPES = ['log', 'trace', 'video', 'screenshot', 'pcap', 'report', 'file'] as const;
export type AssetType = (typeof ASSET_TYPES)[number];

export const AssetManifestSchema = Type.Object({
  assets: Type.Array(
    Type.Object({
      type: Type.Enum(ASSET_TYPES),
      name: Type.String(),
      url: Type.String({ description: 'Signed download link: no API key needed until it expires' }),
      contentType: Type.String(),
      source: Type.String(),
      size: Type.Integer(),
    }),
  ),
  truncated: Type.Boolean(),
  entriesReturned: Type.Integer(),
  entriesTotal: Type.Integer(),
});
export type AssetManifest = Type.Static<typeof AssetManifestSchema>;

/** What kind of asset an artifact is, by its name and content type. */
export function assetTypeOf(name: string, contentType: string): AssetType {
  const lower = name.toLowerCase();
  if (/trace[^/]*\.zip$/.test(lower)) return 'trace';
  if (contentType.startsWith('video/') || /\.(webm|mp4)$/.test(lower)) return 'video';
  if (contentType.startsWith('image/') || /\.(png|jpe?g)$/.test(lower)) return 'screenshot';
  if (/\.(pcap|pcapng)$/.test(lower)) return 'pcap';
  if (contentType === 'text/html' || /\.html?$/.test(lower)) return 'report';
  if (/\.(log|txt)$/.test(lower) || contentType === 'text/plain') return 'log';
  return 'file';
}

export function assetManifest(entries: readonly ArtifactEntry[], filter: { type?: AssetType; name?: string }): AssetManifest {
  const wantedName = filter.name?.toLowerCase();
  const assets = entries
    .filter((entry): entry is ArtifactEntry & { link: string } => entry.link !== null)
    .map((entry) => ({
      type: assetTypeOf(entry.name, entry.contentType),
      name: entry.name,
      url: entry.link,
      contentType: entry.contentType,
      source: 'artifact',
      size: entry.size,
    }))
    .filter((asset) => (filter.type === undefined || asset.type === filter.type) && (wantedName === undefined || asset.name.toLowerCase() === wantedName));
  return { assets, truncated: false, entriesReturned: assets.length, entriesTotal: assets.length };
}
