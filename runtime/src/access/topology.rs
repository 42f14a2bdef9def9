//! Which logical CPUs belong to which socket, from sysfs
//! (`/sys/devices/system/cpu/cpuN/topology/physical_package_id`), and how many cores each
//! socket has (the distinct `core_id`s of its CPUs). Uncore MSRs are per socket; reading them
//! through any one CPU of the socket is enough, and this picks it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::access::{BackendError, BackendResult};

/// Sockets and their online CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// Socket (physical package id) -> online CPUs, ascending.
    sockets: BTreeMap<u32, Vec<u32>>,
    /// Socket -> its cores (distinct core ids of its online CPUs).
    cores: BTreeMap<u32, u32>,
    /// CPU -> its L3: the lowest CPU sharing that L3 cache. Empty when unknown (each socket
    /// then counts as one L3).
    l3: BTreeMap<u32, u32>,
}

impl Topology {
    /// Reads the topology under `sys_root` (normally `/sys`).
    pub fn read(sys_root: &Path) -> BackendResult<Self> {
        let dir = sys_root.join("devices/system/cpu");
        let entries = std::fs::read_dir(&dir).map_err(|e| BackendError::Topology {
            path: dir.clone(),
            problem: format!("{e}; is sysfs mounted, or does --root point at the right tree?"),
        })?;
        let mut sockets: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        let mut core_ids: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
        let mut l3: BTreeMap<u32, u32> = BTreeMap::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(cpu) = name.strip_prefix("cpu").and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let path = entry.path();
            // `online` is absent for CPUs that cannot be taken offline (usually CPU 0).
            if let Ok(online) = std::fs::read_to_string(path.join("online")) {
                if online.trim() == "0" {
                    continue;
                }
            }
            let package = path.join("topology/physical_package_id");
            let Ok(text) = std::fs::read_to_string(&package) else {
                continue; // offline CPUs have no topology directory
            };
            let socket = text
                .trim()
                .parse::<u32>()
                .map_err(|_| BackendError::Topology {
                    path: package.clone(),
                    problem: format!("`{}` is not a package id", text.trim()),
                })?;
            sockets.entry(socket).or_default().push(cpu);
            // Without a core id (an old kernel), each CPU counts as a core.
            let core = std::fs::read_to_string(path.join("topology/core_id"))
                .map_or_else(|_| format!("cpu{cpu}"), |t| t.trim().to_string());
            core_ids.entry(socket).or_default().insert(core);
            if let Some(first) = l3_sharing(&path) {
                l3.insert(cpu, first);
            }
        }
        if sockets.is_empty() {
            return Err(BackendError::Topology {
                path: dir,
                problem: "no online CPU with a topology/physical_package_id was found".into(),
            });
        }
        for cpus in sockets.values_mut() {
            cpus.sort_unstable();
        }
        let cores = core_ids
            .into_iter()
            .map(|(s, ids)| (s, ids.len() as u32))
            .collect();
        Ok(Self { sockets, cores, l3 })
    }

    /// The topology of the running system.
    pub fn system() -> BackendResult<Self> {
        Self::read(&PathBuf::from("/sys"))
    }

    /// A topology given directly: socket -> CPUs, each CPU a core of its own.
    pub fn from_sockets(sockets: impl IntoIterator<Item = (u32, Vec<u32>)>) -> Self {
        let mut sockets: BTreeMap<u32, Vec<u32>> = sockets.into_iter().collect();
        for cpus in sockets.values_mut() {
            cpus.sort_unstable();
        }
        let cores = sockets.iter().map(|(s, c)| (*s, c.len() as u32)).collect();
        Self {
            sockets,
            cores,
            l3: BTreeMap::new(),
        }
    }

    /// The same topology with every `n` consecutive CPUs of a socket sharing one L3 (as the
    /// CPUs of one AMD core complex do).
    pub fn with_cpus_per_l3(mut self, n: u32) -> Self {
        let n = n.max(1) as usize;
        for cpus in self.sockets.values() {
            for group in cpus.chunks(n) {
                for &cpu in group {
                    self.l3.insert(cpu, group[0]);
                }
            }
        }
        self
    }

    /// The L3 cache `cpu` shares, named by the lowest CPU sharing it (the socket's lowest
    /// CPU where the machine does not say).
    pub fn l3_of(&self, cpu: u32) -> Option<u32> {
        match self.l3.get(&cpu) {
            Some(first) => Some(*first),
            None => self
                .socket_of(cpu)
                .and_then(|s| self.cpu_for_socket(s).ok()),
        }
    }

    /// One CPU per L3 cache of `socket` (the lowest sharing each), ascending: where a box of
    /// each L3 is reached.
    pub fn l3_cpus(&self, socket: u32) -> Vec<u32> {
        let mut firsts: Vec<u32> = self
            .sockets
            .get(&socket)
            .into_iter()
            .flatten()
            .filter_map(|&c| self.l3_of(c))
            .collect();
        firsts.sort_unstable();
        firsts.dedup();
        firsts
    }

    /// The same topology with `cores` cores in every socket (CPUs sharing cores, or parts
    /// whose cores are not all online).
    pub fn with_cores_per_socket(mut self, cores: u32) -> Self {
        for n in self.cores.values_mut() {
            *n = cores;
        }
        self
    }

    /// How many cores `socket` has (of its online CPUs), if the machine has that socket.
    pub fn cores(&self, socket: u32) -> Option<u32> {
        self.cores.get(&socket).copied()
    }

    /// Socket ids, ascending.
    pub fn sockets(&self) -> impl Iterator<Item = u32> + '_ {
        self.sockets.keys().copied()
    }

    /// The CPU through which to access `socket`'s uncore MSRs: its lowest online CPU.
    pub fn cpu_for_socket(&self, socket: u32) -> BackendResult<u32> {
        self.sockets
            .get(&socket)
            .and_then(|cpus| cpus.first().copied())
            .ok_or_else(|| BackendError::NoCpuForSocket {
                socket,
                present: self.sockets.keys().copied().collect(),
            })
    }

    /// Every online CPU with its socket, in CPU order.
    pub fn cpus(&self) -> Vec<(u32, u32)> {
        let mut cpus: Vec<(u32, u32)> = self
            .sockets
            .iter()
            .flat_map(|(s, cpus)| cpus.iter().map(move |c| (*c, *s)))
            .collect();
        cpus.sort_unstable();
        cpus
    }

    /// The socket of `cpu`.
    pub fn socket_of(&self, cpu: u32) -> Option<u32> {
        self.sockets
            .iter()
            .find(|(_, cpus)| cpus.contains(&cpu))
            .map(|(s, _)| *s)
    }
}

/// The lowest CPU sharing the L3 cache of the CPU whose sysfs directory is `cpu_dir`, from
/// `cache/index3/shared_cpu_list` (a list such as `0-7,64-71`) when index 3 is a level-3 cache.
fn l3_sharing(cpu_dir: &Path) -> Option<u32> {
    let index = cpu_dir.join("cache/index3");
    let level = std::fs::read_to_string(index.join("level")).ok()?;
    if level.trim() != "3" {
        return None;
    }
    let list = std::fs::read_to_string(index.join("shared_cpu_list")).ok()?;
    list.trim()
        .split(',')
        .filter_map(|part| part.split('-').next()?.trim().parse::<u32>().ok())
        .min()
}
