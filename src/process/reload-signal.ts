// Listened for as soon as this loads: SIGHUP's default ends the process, so one sent
// during start-up is remembered and acted on once there is something to reload.
let reload: (() => void) | undefined
let missed = false

process.on('SIGHUP', () => {
  if (reload === undefined) missed = true
  else reload()
})

/** Makes `reloadTokens` what SIGHUP does from now on, and does it once if one came before. */
export function onReload (reloadTokens: () => void): void {
  reload = reloadTokens
  if (missed) {
    missed = false
    reloadTokens()
  }
}
