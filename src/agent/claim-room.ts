/**
 * How many jobs of one lane to ask the service for now.
 *
 * A lane may hold a backlog beyond what it runs (`prefetch`), so its queue
 * does not run dry while a claim is on its way. Such a lane asks again only
 * once half of its backlog has gone: a busy agent then claims in batches,
 * not one job per freed slot, which would cost the service a claim per job.
 * A lane without backlog asks as soon as a slot frees.
 */
export function claimRoom(claimed: number, capacity: number, prefetch: number): number {
  const room = capacity + prefetch - claimed;
  const batch = Math.max(1, Math.ceil(prefetch / 2));
  return room >= batch ? room : 0;
}
