/**
 * SIGHUP, as daemons reread their configuration: here, the tokens file. Listened for as
 * soon as this module loads, which the entry point does before the rest of the service:
 * SIGHUP's default action ends the process, and a reload sent while the service started
 * (a deploy's reload right after its start) killed it, silently. One that arrives before
 * there is anything to reload is remembered, and made once there is.
 */
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
