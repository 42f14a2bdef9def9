//! The kernel's uncore and core PMUs of every processor, as sysfs trees: each PMU's `type`,
//! `format/*` and `cpumask`, the formats copied from the Linux drivers' format attribute
//! groups (`DEFINE_UNCORE_FORMAT_ATTR` and the `*_formats_attr` lists of uncore_nhmex.c and
//! uncore_snbep.c, `PMU_FORMAT_ATTR` in core.c), independently of the spec's copy.

#![allow(dead_code)]

use std::fs;
use std::path::Path;

pub type Formats = &'static [(&'static str, &'static str)];

pub const NHMEX_U: Formats = &[("event", "config:0-7"), ("edge", "config:18")];
pub const NHMEX_C: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
];
pub const NHMEX_B: Formats = &[
    ("event", "config:1-5"),
    ("counter", "config:6-7"),
    ("match", "config1:0-63"),
    ("mask", "config2:0-63"),
];
pub const NHMEX_S: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
    ("match", "config1:0-63"),
    ("mask", "config2:0-63"),
];
pub const NHMEX_M: Formats = &[
    ("count_mode", "config:2-3"),
    ("storage_mode", "config:4-5"),
    ("wrap_mode", "config:6"),
    ("flag_mode", "config:7"),
    ("inc_sel", "config:9-13"),
    ("set_flag_sel", "config:19-21"),
    ("filter_cfg_en", "config2:63"),
    ("filter_match", "config2:0-33"),
    ("filter_mask", "config2:34-61"),
    ("dsp", "config1:0-31"),
    ("pld", "config1:32-63"),
];
pub const NHMEX_R: Formats = &[
    ("event", "config:1-5"),
    ("xbr_mm_cfg", "config:32-63"),
    ("xbr_match", "config1:0-63"),
    ("xbr_mask", "config2:0-63"),
    ("qlx_cfg", "config1:0-15"),
    ("iperf_cfg", "config1:0-31"),
];
/// snbep_uncore_formats_attr (and ivbep_uncore_formats_attr, the same list).
pub const SNBEP: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
];
/// snbep_uncore_ubox_formats_attr (and ivbep_uncore_ubox_formats_attr).
pub const SNBEP_U: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-28"),
];
pub const SNBEP_C: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("tid_en", "config:19"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
    ("filter_tid", "config1:0-4"),
    ("filter_nid", "config1:10-17"),
    ("filter_state", "config1:18-22"),
    ("filter_opc", "config1:23-31"),
];
pub const SNBEP_PCU: Formats = &[
    ("event", "config:0-7"),
    ("occ_sel", "config:14-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-28"),
    ("occ_invert", "config:30"),
    ("occ_edge", "config:14-51"),
    ("filter_band0", "config1:0-7"),
    ("filter_band1", "config1:8-15"),
    ("filter_band2", "config1:16-23"),
    ("filter_band3", "config1:24-31"),
];
pub const SNBEP_Q: Formats = &[
    ("event", "config:0-7,21"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
    ("match_rds", "config1:48-51"),
    ("match_rnid30", "config1:32-35"),
    ("match_rnid4", "config1:31"),
    ("match_dnid", "config1:13-17"),
    ("match_mc", "config1:9-12"),
    ("match_opc", "config1:5-8"),
    ("match_vnw", "config1:3-4"),
    ("match0", "config1:0-31"),
    ("match1", "config1:32-63"),
    ("mask_rds", "config2:48-51"),
    ("mask_rnid30", "config2:32-35"),
    ("mask_rnid4", "config2:31"),
    ("mask_dnid", "config2:13-17"),
    ("mask_mc", "config2:9-12"),
    ("mask_opc", "config2:5-8"),
    ("mask_vnw", "config2:3-4"),
    ("mask0", "config2:0-31"),
    ("mask1", "config2:32-63"),
];
/// skx_uncore_cha_formats_attr (Skylake-SP, Cascade Lake).
pub const SKX_CHA: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("tid_en", "config:19"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
    ("filter_tid", "config1:0-8"),
    ("filter_state", "config1:17-26"),
    ("filter_rem", "config1:32"),
    ("filter_loc", "config1:33"),
    ("filter_nm", "config1:36"),
    ("filter_all_op", "config1:35"),
    ("filter_not_nm", "config1:37"),
    ("filter_opc0", "config1:41-50"),
    ("filter_opc1", "config1:51-60"),
    ("filter_nc", "config1:62"),
    ("filter_isoc", "config1:63"),
];
/// skx_uncore_iio_formats_attr: a 12-bit thresh, ch_mask and fc_mask.
pub const SKX_IIO: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-35"),
    ("ch_mask", "config:36-43"),
    ("fc_mask", "config:44-46"),
];
/// skx_upi_uncore_formats_attr: the umask with its extension.
pub const SKX_UPI: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15,32-43,45-55"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
];
/// skx_uncore_pcu_formats_attr.
pub const SKX_PCU: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
    ("occ_invert", "config:30"),
    ("occ_edge_det", "config:31"),
    ("filter_band0", "config1:0-7"),
    ("filter_band1", "config1:8-15"),
    ("filter_band2", "config1:16-23"),
    ("filter_band3", "config1:24-31"),
];
/// ivbep_uncore_cbox_formats_attr: no inv.
pub const IVBEP_C: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("tid_en", "config:19"),
    ("thresh", "config:24-31"),
    ("filter_tid", "config1:0-4"),
    ("filter_link", "config1:5-8"),
    ("filter_state", "config1:17-22"),
    ("filter_nid", "config1:32-47"),
    ("filter_opc", "config1:52-60"),
    ("filter_nc", "config1:62"),
    ("filter_c6", "config1:61"),
    ("filter_isoc", "config1:63"),
];
/// ivbep_uncore_pcu_formats_attr: no inv.
pub const IVBEP_PCU: Formats = &[
    ("event", "config:0-7"),
    ("occ_sel", "config:14-15"),
    ("edge", "config:18"),
    ("thresh", "config:24-28"),
    ("occ_invert", "config:30"),
    ("occ_edge", "config:14-51"),
    ("filter_band0", "config1:0-7"),
    ("filter_band1", "config1:8-15"),
    ("filter_band2", "config1:16-23"),
    ("filter_band3", "config1:24-31"),
];
/// ivbep_uncore_qpi_formats_attr: no inv.
pub const IVBEP_Q: Formats = &[
    ("event", "config:0-7,21"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("thresh", "config:24-31"),
    ("match_rds", "config1:48-51"),
    ("match_rnid30", "config1:32-35"),
    ("match_rnid4", "config1:31"),
    ("match_dnid", "config1:13-17"),
    ("match_mc", "config1:9-12"),
    ("match_opc", "config1:5-8"),
    ("match_vnw", "config1:3-4"),
    ("match0", "config1:0-31"),
    ("match1", "config1:32-63"),
    ("mask_rds", "config2:48-51"),
    ("mask_rnid30", "config2:32-35"),
    ("mask_rnid4", "config2:31"),
    ("mask_dnid", "config2:13-17"),
    ("mask_mc", "config2:9-12"),
    ("mask_opc", "config2:5-8"),
    ("mask_vnw", "config2:3-4"),
    ("mask0", "config2:0-31"),
    ("mask1", "config2:32-63"),
];
/// hswep_uncore_ubox_formats_attr.
pub const HSWEP_U: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-28"),
    ("filter_tid", "config1:0"),
    ("filter_cid", "config1:5"),
];
/// hswep_uncore_cbox_formats_attr (also Broadwell-EP's): no inv.
pub const HSWEP_C: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("tid_en", "config:19"),
    ("thresh", "config:24-31"),
    ("filter_tid", "config1:0-5"),
    ("filter_link", "config1:6-8"),
    ("filter_state", "config1:17-23"),
    ("filter_nid", "config1:32-47"),
    ("filter_opc", "config1:52-60"),
    ("filter_nc", "config1:62"),
    ("filter_c6", "config1:61"),
    ("filter_isoc", "config1:63"),
];
/// hswep_uncore_sbox_formats_attr (also Broadwell-EP's).
pub const HSWEP_S: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("tid_en", "config:19"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
];
/// Ice Lake-SP: snr_uncore_cha_formats_attr (umask_ext2, filter_tid5).
pub const ICX_CHA: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15,32-57"),
    ("edge", "config:18"),
    ("tid_en", "config:19"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
    ("filter_tid", "config1:0-9"),
];
/// Ice Lake-SP: snr_uncore_iio_formats_attr (thresh9, ch_mask2, fc_mask2).
pub const ICX_IIO: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-35"),
    ("ch_mask", "config:36-47"),
    ("fc_mask", "config:48-50"),
];
/// Ice Lake-SP: snr_m2m_uncore_formats_attr (umask_ext3).
pub const ICX_M2M: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15,32-39"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
];
/// Ice Lake-SP: icx_upi_uncore_formats_attr (umask_ext4).
pub const ICX_UPI: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15,32-55"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
];
/// cstate.c's format: the event is the whole config.
pub const CSTATE: Formats = &[("event", "config:0-63")];
/// skx_uncore_iio_freerunning_formats_attr: the free-running PMUs (iio_free_running,
/// imc_free_running) take an event and a umask only.
pub const SKX_FREE: Formats = &[("event", "config:0-7"), ("umask", "config:8-15")];
pub const CPU: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("pc", "config:19"),
    ("any", "config:21"),
    ("inv", "config:23"),
    ("cmask", "config:24-31"),
];
/// The core PMU of a Skylake-SP (core.c: intel_arch3_formats_attr with the offcore response
/// and load-latency formats, and skl_format_attr's front-end format), all in config1.
pub const CPU_SKL: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("pc", "config:19"),
    ("any", "config:21"),
    ("inv", "config:23"),
    ("cmask", "config:24-31"),
    ("offcore_rsp", "config1:0-63"),
    ("ldlat", "config1:0-15"),
    ("frontend", "config1:0-23"),
];

/// uncore_discovery.c's generic_uncore_formats_attr: the boxes Linux builds from the
/// discovery table alone (the Sapphire Rapids U-box, uncore_type_5).
pub const DISCOVERY_GENERIC: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
];
/// spr_uncore_cha_formats_attr (umask_ext5, tid_en2, filter_tid5).
pub const SPR_CHA: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15,32-63"),
    ("tid_en", "config:16"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
    ("filter_tid", "config1:0-9"),
];
/// dmr_sca_uncore_formats_attr (tip 6daf2c35b835): umask_ext5, no tid_en, thresh8.
pub const DMR_SCA: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15,32-63"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
];
/// spr_uncore_raw_formats_attr (umask_ext4).
pub const SPR_RAW: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15,32-55"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-31"),
];
/// snr_uncore_iio_formats_attr, which spr_uncore_iio uses (thresh9, ch_mask2, fc_mask2).
pub const SPR_IIO: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("thresh", "config:24-35"),
    ("ch_mask", "config:36-47"),
    ("fc_mask", "config:48-50"),
];
/// arch/x86/events/amd/core.c's amd_format_attr: the AMD core PMU, also named cpu.
pub const AMD_CPU: Formats = &[
    ("event", "config:0-7,32-35"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("cmask", "config:24-31"),
];
/// arch/x86/events/amd/uncore.c: amd_l3 on family 17h (event8, umask8, slicemask,
/// threadmask8) and from 19h (event8, umask8, coreid, enallslices, enallcores, sliceid,
/// threadmask2).
pub const AMD_L3_F17H: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("slicemask", "config:48-51"),
    ("threadmask", "config:56-63"),
];
pub const AMD_L3_F19H: Formats = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("coreid", "config:42-44"),
    ("enallslices", "config:46"),
    ("enallcores", "config:47"),
    ("sliceid", "config:48-50"),
    ("threadmask", "config:56-57"),
];
/// amd_df: event14 and umask8 before PerfMonV2, event14v2 and umask12 with it.
pub const AMD_DF: Formats = &[
    ("event", "config:0-7,32-35,59-60"),
    ("umask", "config:8-15"),
];
pub const AMD_DF_V2: Formats = &[
    ("event", "config:0-7,32-37"),
    ("umask", "config:8-15,24-27"),
];
/// amd_umc_N (PerfMonV2): event8 and rdwrmask.
pub const AMD_UMC: Formats = &[("event", "config:0-7"), ("rdwrmask", "config:8-9")];

/// drivers/perf/arm_pmuv3.c's armv8_pmuv3_format_attrs: the Arm PMUv3 core PMU, named
/// armv8_pmuv3_0 on ACPI systems.
pub const ARMV8_PMUV3: Formats = &[
    ("event", "config:0-15"),
    ("long", "config1:0"),
    ("rdpmc", "config1:1"),
];

/// scf_pmu_format_attrs (drivers/perf/arm_cspmu/nvidia_cspmu.c): ARM_CSPMU_FORMAT_EVENT_ATTR
/// alone, bit 32 selecting the cycle counter.
pub const NVIDIA_SCF: Formats = &[("event", "config:0-32")];

fn idx(base: &str, n: usize, f: Formats) -> impl Iterator<Item = (String, Formats)> + '_ {
    (0..n).map(move |i| (format!("{base}_{i}"), f))
}

/// (PMU name, format) of every PMU the kernel registers for `processor` (the core PMU for
/// `architectural`), as uncore.c names them: `uncore_<type>` for a type of one box,
/// `uncore_<type>_<n>` otherwise.
pub fn kernel_pmus(processor: &str) -> Vec<(String, Formats)> {
    let mut v: Vec<(String, Formats)> = Vec::new();
    let one = |v: &mut Vec<(String, Formats)>, name: &str, f: Formats| v.push((name.into(), f));
    match processor {
        "xeon-7500" => {
            one(&mut v, "uncore_ubox", NHMEX_U);
            one(&mut v, "uncore_wbox", NHMEX_C);
            v.extend(idx("uncore_cbox", 10, NHMEX_C));
            v.extend(idx("uncore_bbox", 2, NHMEX_B));
            v.extend(idx("uncore_sbox", 2, NHMEX_S));
            v.extend(idx("uncore_mbox", 2, NHMEX_M));
            v.extend(idx("uncore_rbox", 2, NHMEX_R));
        }
        "xeon-e5-2600" => {
            one(&mut v, "uncore_ubox", SNBEP_U);
            v.extend(idx("uncore_cbox", 8, SNBEP_C));
            one(&mut v, "uncore_ha", SNBEP);
            v.extend(idx("uncore_imc", 4, SNBEP));
            one(&mut v, "uncore_pcu", SNBEP_PCU);
            v.extend(idx("uncore_qpi", 2, SNBEP_Q));
            one(&mut v, "uncore_r2pcie", SNBEP);
            v.extend(idx("uncore_r3qpi", 2, SNBEP));
            one(&mut v, "cstate_core", CSTATE);
        }
        "xeon-e5-2600-v2" => {
            one(&mut v, "uncore_ubox", SNBEP_U);
            v.extend(idx("uncore_cbox", 15, IVBEP_C));
            v.extend(idx("uncore_ha", 2, SNBEP));
            v.extend(idx("uncore_imc", 8, SNBEP));
            one(&mut v, "uncore_irp", SNBEP);
            one(&mut v, "uncore_pcu", IVBEP_PCU);
            v.extend(idx("uncore_qpi", 3, IVBEP_Q));
            one(&mut v, "uncore_r2pcie", SNBEP);
            v.extend(idx("uncore_r3qpi", 3, SNBEP));
            one(&mut v, "cstate_core", CSTATE);
        }
        "xeon-e5-2600-v3" | "xeon-e5-2600-v4" => {
            let v3 = processor == "xeon-e5-2600-v3";
            one(&mut v, "uncore_ubox", if v3 { HSWEP_U } else { SNBEP_U });
            v.extend(idx("uncore_cbox", if v3 { 18 } else { 24 }, HSWEP_C));
            v.extend(idx("uncore_sbox", 4, HSWEP_S));
            v.extend(idx("uncore_ha", 2, SNBEP));
            v.extend(idx("uncore_imc", 8, SNBEP));
            one(&mut v, "uncore_irp", SNBEP);
            one(&mut v, "uncore_pcu", SNBEP_PCU);
            v.extend(idx("uncore_qpi", 3, SNBEP_Q));
            one(&mut v, "uncore_r2pcie", SNBEP);
            v.extend(idx("uncore_r3qpi", 3, SNBEP));
            one(&mut v, "cstate_core", CSTATE);
        }
        "skylake-sp" | "cascade-lake" => {
            // skx_uncore_formats_attr is snbep_uncore_formats_attr's list; the U-box uses
            // ivbep_uncore_ubox_format_group.
            one(&mut v, "uncore_ubox", SNBEP_U);
            v.extend(idx("uncore_cha", 28, SKX_CHA));
            v.extend(idx("uncore_iio", 6, SKX_IIO));
            v.extend(idx("uncore_irp", 6, SNBEP));
            one(&mut v, "uncore_pcu", SKX_PCU);
            v.extend(idx("uncore_imc", 6, SNBEP));
            v.extend(idx("uncore_m2m", 2, SNBEP));
            v.extend(idx("uncore_upi", 3, SKX_UPI));
            v.extend(idx("uncore_m3upi", 3, SNBEP));
            v.extend(idx("uncore_m2pcie", 4, SNBEP));
            v.extend(idx("uncore_iio_free_running", 6, SKX_FREE));
        }
        "ice-lake-sp" => {
            // icx_msr_uncores reuses skx_uncore_ubox and skx_uncore_pcu; the IRP and M2PCIe
            // use ivbep_uncore_format_group, the M3UPI skx_uncore_format_group (both the
            // snbep list).
            one(&mut v, "uncore_ubox", SNBEP_U);
            v.extend(idx("uncore_cha", 40, ICX_CHA));
            v.extend(idx("uncore_iio", 6, ICX_IIO));
            v.extend(idx("uncore_irp", 6, SNBEP));
            v.extend(idx("uncore_m2pcie", 6, SNBEP));
            one(&mut v, "uncore_pcu", SKX_PCU);
            v.extend(idx("uncore_m2m", 4, ICX_M2M));
            v.extend(idx("uncore_upi", 3, ICX_UPI));
            v.extend(idx("uncore_m3upi", 3, SNBEP));
            // icx_uncore_iio_free_running and icx_uncore_imc_free_running (memory-mapped):
            // skx_uncore_iio_freerunning_format_group.
            v.extend(idx("uncore_iio_free_running", 6, SKX_FREE));
            v.extend(idx("uncore_imc_free_running", 4, SKX_FREE));
            // icx_uncore_imc (memory-mapped): twelve channels, skx_uncore_format_group.
            v.extend(idx("uncore_imc", 12, SNBEP));
        }
        "sapphire-rapids" | "emerald-rapids" => {
            // The boxes of spec/sapphire-rapids/: named uncore_<type>_<box id> (the CHAs and
            // IIO/IRP stacks) or by the kernel's own tables (UPI, M3UPI); the U-box has no
            // entry in spr_uncores and is named after its discovery type.
            one(&mut v, "uncore_type_5", DISCOVERY_GENERIC);
            v.extend(idx("uncore_cha", 60, SPR_CHA));
            v.extend(idx("uncore_iio", 12, SPR_IIO));
            v.extend(idx("uncore_irp", 12, SPR_RAW));
            v.extend(idx("uncore_upi", 4, SPR_RAW));
            v.extend(idx("uncore_m3upi", 4, SPR_RAW));
            // spr_uncore_m2m and spr_uncore_imc (memory-mapped): SPR_UNCORE_COMMON_FORMAT.
            v.extend(idx("uncore_m2m", 4, SPR_RAW));
            v.extend(idx("uncore_imc", 8, SPR_RAW));
            // spr_uncore_iio_free_running: as many boxes as IIO box ids.
            v.extend(idx("uncore_iio_free_running", 12, SKX_FREE));
            // spr_uncore_imc_free_running (memory-mapped): half the iMC boxes, one per
            // controller, skx_uncore_iio_freerunning_format_group.
            v.extend(idx("uncore_imc_free_running", 4, SKX_FREE));
        }
        // Linux's uncore.c matches INTEL_ATOM_CRESTMONT_X (Sierra Forest) and
        // INTEL_ATOM_DARKMONT_X (Clearwater Forest) to gnr_uncore_init too.
        "granite-rapids" | "sierra-forest" | "clearwater-forest" => {
            // gnr_uncores: the U-box is named (ubox, one box); the CHAs, IIO and IRP stacks
            // are the Sapphire Rapids types.
            one(&mut v, "uncore_ubox", DISCOVERY_GENERIC);
            // gnr_uncores[4] = spr_uncore_pcu: named pcu, one box, no format group of its own
            // (the generic formats), placed by the discovery table.
            one(&mut v, "uncore_pcu", DISCOVERY_GENERIC);
            v.extend(idx("uncore_cha", 126, SPR_CHA));
            v.extend(idx("uncore_iio", 16, SPR_IIO));
            v.extend(idx("uncore_irp", 16, SPR_RAW));
            // gnr_uncore_b2cmi, gnr_uncore_upi and spr_uncore_imc: SPR_UNCORE_COMMON_FORMAT.
            v.extend(idx("uncore_b2cmi", 12, SPR_RAW));
            v.extend(idx("uncore_upi", 6, SPR_RAW));
            v.extend(idx("uncore_imc", 12, SPR_RAW));
            // gnr_uncore_b2upi and gnr_uncore_b2cxl (placed by the table):
            // SPR_UNCORE_COMMON_FORMAT, as many as the spec's instances.
            v.extend(idx("uncore_b2upi", 6, SPR_RAW));
            v.extend(idx("uncore_b2cxl", 4, SPR_RAW));
            // spr_uncore_iio_free_running with gnr_iio_freerunning: as many boxes as IIO box
            // ids.
            v.extend(idx("uncore_iio_free_running", 16, SKX_FREE));
        }
        "amd-zen2" | "amd-zen3" => {
            one(&mut v, "cpu", AMD_CPU);
            let f17h = processor == "amd-zen2";
            one(
                &mut v,
                "amd_l3",
                if f17h { AMD_L3_F17H } else { AMD_L3_F19H },
            );
            one(&mut v, "amd_df", AMD_DF);
        }
        "amd-zen4" | "amd-zen5" | "amd-zen6" => {
            one(&mut v, "cpu", AMD_CPU);
            one(&mut v, "amd_l3", AMD_L3_F19H);
            one(&mut v, "amd_df", AMD_DF_V2);
            v.extend(idx("amd_umc", 12, AMD_UMC));
        }
        "neoverse-v2" | "neoverse-n2" | "neoverse-v3" | "neoverse-n3" | "neoverse-n1"
        | "neoverse-v1" => one(&mut v, "armv8_pmuv3_0", ARMV8_PMUV3),
        // nvidia_cspmu.c names socket 0's SCF PMU nvidia_scf_pmu_0 (NAME_FMT_SOCKET).
        "nvidia-grace-scf" => one(&mut v, "nvidia_scf_pmu_0", NVIDIA_SCF),
        // dmr_uncores[31] = dmr_uncore_cbo (tip 66e2075426f3): one PMU per CBO box the CBB
        // tables list (the simulated part's 4).
        "diamond-rapids" => {
            one(&mut v, "cpu", CPU);
            v.extend(idx("uncore_cbo", 4, DMR_SCA));
        }
        _ => one(&mut v, "cpu", CPU),
    }
    v
}

/// Writes `processor`'s PMUs (and the core PMU) under `dir` (the directory that stands for
/// `/sys/bus/event_source/devices`), each uncore PMU counting on `cpumask`.
pub fn write_tree(dir: &Path, processor: &str, cpumask: &str) {
    let mut all = kernel_pmus(processor);
    // The architectural core PMU, unless the processor's own core PMU is cpu (AMD's).
    if !all.iter().any(|(name, _)| name == "cpu") {
        all.extend(kernel_pmus("architectural"));
    }
    for (i, (name, formats)) in all.into_iter().enumerate() {
        let d = dir.join(&name);
        fs::create_dir_all(d.join("format")).unwrap();
        fs::write(d.join("type"), format!("{}\n", 20 + i)).unwrap();
        for (f, spec) in formats {
            fs::write(d.join("format").join(f), format!("{spec}\n")).unwrap();
        }
        if name != "cpu" {
            fs::write(d.join("cpumask"), format!("{cpumask}\n")).unwrap();
        }
        if name.starts_with("uncore_imc") {
            fs::create_dir_all(d.join("events")).unwrap();
            fs::write(d.join("events/clockticks"), "event=0xff,umask=0x00\n").unwrap();
            fs::write(d.join("events/cas_count_read.unit"), "MiB\n").unwrap();
        }
    }
}
