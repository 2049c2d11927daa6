/**
 * Sets `key` to `value` as the newest entry of `map` (a key already there moves to the end), then,
 * when `map` holds more than `max` entries, deletes the oldest: a map kept in order of last
 * setting, whose memory is bounded whatever the number of keys.
 */
export const setNewest = <K, V>(map: Map<K, V>, key: K, value: V, max: number): void => {
  map.delete(key)
  map.set(key, value)
  if (map.size > max) {
    const oldest = map.keys().next()
    if (oldest.done !== true) map.delete(oldest.value)
  }
}
