//! How the counts of several CPUs are shown: summed (perf's default), per CPU (`-A`,
//! `--no-aggr`) or per socket (`--per-socket`), with each row's place as perf prints it.

use std::io;

use crate::perf::counting::EventReading;

/// How counts of several targets (CPUs) are gathered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatAggr {
    /// One sum over every target.
    #[default]
    Global,
    /// Each CPU on its own (`-A`).
    PerCpu,
    /// Each socket's CPUs summed (`--per-socket`).
    PerSocket,
}

/// What a row counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowPlace {
    /// Everything counted.
    All,
    /// One CPU.
    Cpu(u32),
    /// One socket, with the number of its CPUs counted.
    Socket {
        /// The socket (`physical_package_id`).
        socket: u32,
        /// How many of its CPUs were counted.
        cpus: u32,
    },
}

/// The socket of `cpu`, from `/sys/devices/system/cpu/cpuN/topology/physical_package_id`.
fn socket_of(cpu: u32) -> io::Result<u32> {
    let path = format!("/sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id");
    std::fs::read_to_string(&path)?
        .trim()
        .parse()
        .map_err(|_| io::Error::other(format!("{path} is not a number")))
}

/// The rows' places and, for each, the positions in `cpus` it sums (`cpus` empty: one
/// target that is not a CPU).
pub fn groups(
    aggr: StatAggr,
    cpus: &[u32],
    targets: usize,
) -> io::Result<Vec<(RowPlace, Vec<usize>)>> {
    Ok(match aggr {
        StatAggr::Global => vec![(RowPlace::All, (0..targets).collect())],
        StatAggr::PerCpu => cpus
            .iter()
            .enumerate()
            .map(|(i, &c)| (RowPlace::Cpu(c), vec![i]))
            .collect(),
        StatAggr::PerSocket => {
            let mut by_socket: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
            for (i, &c) in cpus.iter().enumerate() {
                by_socket.entry(socket_of(c)?).or_default().push(i);
            }
            by_socket
                .into_iter()
                .map(|(socket, idx)| {
                    let cpus = u32::try_from(idx.len()).unwrap_or(u32::MAX);
                    (RowPlace::Socket { socket, cpus }, idx)
                })
                .collect()
        }
    })
}

/// Each group's reading of each event: the sum of its targets' (`None` where the event is
/// not supported).
pub fn aggregate(
    per_target: &[Option<Vec<EventReading>>],
    groups: &[(RowPlace, Vec<usize>)],
) -> Vec<Vec<Option<EventReading>>> {
    groups
        .iter()
        .map(|(_, idx)| {
            per_target
                .iter()
                .map(|ev| {
                    ev.as_ref().map(|rs| {
                        idx.iter().filter_map(|&i| rs.get(i)).fold(
                            EventReading::default(),
                            |acc, r| EventReading {
                                count: acc.count.wrapping_add(r.count),
                                time_enabled: acc.time_enabled + r.time_enabled,
                                time_running: acc.time_running + r.time_running,
                            },
                        )
                    })
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn groups_sum_their_cpus_readings() {
        let r = |count| EventReading {
            count,
            time_enabled: Duration::from_millis(100),
            time_running: Duration::from_millis(100),
        };
        let per_target = vec![Some(vec![r(1), r(2), r(4)]), None];
        let groups = vec![
            (RowPlace::Cpu(0), vec![0]),
            (RowPlace::Socket { socket: 1, cpus: 2 }, vec![1, 2]),
        ];
        let got = aggregate(&per_target, &groups);
        assert_eq!(got[0][0].unwrap().count, 1);
        assert_eq!(got[1][0].unwrap().count, 6);
        assert_eq!(got[1][0].unwrap().time_enabled, Duration::from_millis(200));
        assert!(got[1][1].is_none());
        let per_cpu = groups_of_cpus();
        assert_eq!(per_cpu.len(), 3);
    }

    fn groups_of_cpus() -> Vec<(RowPlace, Vec<usize>)> {
        groups(StatAggr::PerCpu, &[0, 2, 5], 3).unwrap()
    }
}
