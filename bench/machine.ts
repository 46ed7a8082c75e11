/**
 * The machine as /proc describes it: its cores, where CPU time went during a run (the
 * server, the load generator, the kernel, everything else), a process's memory and a
 * path's filesystem. Linux only, like the bench. Read-only: it starts nothing.
 */
import { readdirSync, readFileSync } from 'node:fs'

export const cpuCount = readFileSync('/proc/cpuinfo', 'utf8').split('\n').filter((l) => l.startsWith('processor')).length
export const cpuModel = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown'

export function filesystemOf (path: string): string {
  let best = { mount: '', type: 'unknown' }
  for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
    const [, mount, type] = line.split(' ')
    if (mount === undefined || type === undefined) continue
    const inside = path === mount || path.startsWith(mount.endsWith('/') ? mount : mount + '/')
    if (inside && mount.length >= best.mount.length) best = { mount, type }
  }
  return best.type
}

/** Jiffies; steal is time the VM wanted a CPU and its host gave it to another guest. */
export interface CpuSample { busy: number, interrupts: number, iowait: number, steal: number, total: number }

/** Per-core jiffies from /proc/stat: core 0 is the server's, core 1 the load generator's. */
function coreTimes (): Map<string, CpuSample> {
  const cores = new Map<string, CpuSample>()
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const m = /^(cpu\d*)\s+(.*)$/.exec(line)
    if (m === null) continue
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const [user, nice, system, idle, iowait, irq, softirq, steal] = m[2].split(/\s+/).map(Number)
    const busy = user + nice + system + irq + softirq
    cores.set(m[1], { busy, interrupts: irq + softirq, iowait, steal: steal ?? 0, total: busy + idle + iowait + (steal ?? 0) })
  }
  return cores
}

/** user+system jiffies from /proc/<pid>/stat, all the process's threads included. */
function processTicks (pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

// PF_KTHREAD in the flags of /proc/<pid>/stat.
const PF_KTHREAD = 0x00200000

/** Jiffies of all kernel threads: disk writeback, the ext4 journal, ksoftirqd. */
function kernelThreadTicks (): number {
  let ticks = 0
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if ((Number(fields[6]) & PF_KTHREAD) !== 0) ticks += Number(fields[11]) + Number(fields[12])
    } catch {} // gone meanwhile
  }
  return ticks
}

interface CpuSnapshot { cores: Map<string, CpuSample>, server: number, self: number, children: number, kthreads: number }

export function snapshot (serverPid: number): CpuSnapshot {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  const [utime, stime, cutime, cstime] = stat.slice(stat.lastIndexOf(')') + 2).split(' ').slice(11, 15).map(Number)
  return { cores: coreTimes(), server: processTicks(serverPid), self: utime + stime, children: cutime + cstime, kthreads: kernelThreadTicks() }
}

/** Where the CPU went during a run, each as a share of one core. */
export interface CpuUse {
  server: number
  /** Known once it has exited and been reaped: the only child of this process to end during a run. */
  loadGenerator: number
  /** Interrupts, softirqs (loopback TCP) and kernel threads (disk writeback, journal): charged to no process. */
  kernel: number
  /** The rest of the busy time: every other process on the machine. */
  others: number
  /** Pinned: the server's core and the load generator's. */
  core0?: CpuSample
  core1?: CpuSample
}

export function cpuUse (a: CpuSnapshot, b: CpuSnapshot): CpuUse {
  const all = delta(a.cores.get('cpu'), b.cores.get('cpu'))!
  // Jiffies of all cores over the run, per core, stand for its wall time in the processes' unit.
  const wall = all.total / cpuCount
  const server = b.server - a.server
  const children = b.children - a.children
  const kernel = all.interrupts + b.kthreads - a.kthreads
  // By difference, so that processes born and gone within the run are counted too.
  const others = all.busy - server - children - (b.self - a.self) - kernel
  return {
    server: server / wall,
    loadGenerator: children / wall,
    kernel: kernel / wall,
    others: Math.max(0, others) / wall,
    core0: delta(a.cores.get('cpu0'), b.cores.get('cpu0')),
    core1: delta(a.cores.get('cpu1'), b.cores.get('cpu1'))
  }
}

function delta (a: CpuSample | undefined, b: CpuSample | undefined): CpuSample | undefined {
  if (a === undefined || b === undefined) return undefined
  return { busy: b.busy - a.busy, interrupts: b.interrupts - a.interrupts, iowait: b.iowait - a.iowait, steal: b.steal - a.steal, total: b.total - a.total }
}

export function memoryKb (pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m === null ? NaN : Number(m[1])
}
