//! Properties of every generated register layout, driven through the public accessors:
//! set-then-get returns the value; setting one field changes no other bit; no setter sets a
//! reserved bit; a checked setter refuses a value too wide. One `layout!` per register,
//! one line per field, written by codegen.
#![allow(clippy::bool_assert_comparison, clippy::identity_op, clippy::unnecessary_cast, unused_comparisons, unused_variables, unused_mut, dead_code)]

use pmu_regs::Register;
use proptest::prelude::*;

/// Field bits as the value type.
macro_rules! conv {
    (bool, $v:expr) => { $v != 0 };
    ($t:ident, $v:expr) => { $v as $t };
}

/// The bits the typed value stands for.
macro_rules! raw_of {
    (named $t:ident, $x:expr) => { $x.bits() as u64 };
    ($k:ident $t:ident, $x:expr) => { $x as u64 };
}

/// Checks one field of `base`, using `v` (already masked to the field) as the new value.
macro_rules! check {
    ($base:ident, $v:ident, $reserved:expr, set($with:ident, $k:ident $t:ident, $lsb:literal, $width:literal)) => {{
        let mask: u64 = if $width >= 64 { u64::MAX } else { ((1u64 << $width) - 1) << $lsb };
        let x = check!(@value $k $t, $v);
        let w = $base.$with(x);
        prop_assert_eq!((w.to_raw() & mask) >> $lsb, raw_of!($k $t, x));
        prop_assert_eq!(w.to_raw() & !mask, $base.to_raw() & !mask);
        prop_assert_eq!(w.to_raw() & $reserved, 0);
        w
    }};
    (@value named $t:ident, $v:expr) => { $t::from_bits($v as u8) };
    (@value $k:ident $t:ident, $v:expr) => { conv!($t, $v) };
}

/// `value` placed in a split field's ranges `(msb, lsb)`, most significant first, one bit at a
/// time from the last range up: a model of the crate's `set_ranges` written independently.
fn scatter(ranges: &[(u32, u32)], value: u64) -> u64 {
    let (mut raw, mut bit) = (0u64, 0u32);
    for &(msb, lsb) in ranges.iter().rev() {
        for b in lsb..=msb {
            raw |= ((value >> bit) & 1) << b;
            bit += 1;
        }
    }
    raw
}

macro_rules! layout {
    ($name:ident: $ty:ty; $($kind:ident($($args:tt)*);)*) => {
        proptest! {
            #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]
            // One value per field: a register has at most 64 (the Skylake-SP global status has 45).
            #[test]
            fn $name(raw in any::<u64>(), vals in proptest::collection::vec(any::<u64>(), 64)) {
                let base = <$ty>::from_raw(raw);
                let reserved = <$ty>::RESERVED_MASK as u64;
                // from_raw never keeps a reserved bit, and the metadata agrees with the type.
                prop_assert_eq!(base.to_raw() & reserved, 0);
                #[cfg(feature = "metadata")]
                prop_assert_eq!(reserved, <$ty as Register>::INFO.reserved_mask);
                prop_assert_eq!(<$ty>::RESERVED_MASK & <$ty>::WRITABLE_MASK, 0);
                // try_from_bits takes the register's own integer: compare within its width.
                let width_mask = u64::MAX >> (64 - 8 * core::mem::size_of_val(&base.bits()));
                prop_assert_eq!(<$ty>::try_from_bits(raw as _).is_ok(), raw & width_mask & reserved == 0);
                let mut n = 0usize;
                $(
                    layout!(@field base, vals, n, reserved, $kind($($args)*));
                    n += 1;
                )*
                let _ = n;
            }
        }
    };
    (@field $base:ident, $vals:ident, $n:ident, $reserved:ident, rw($get:ident, $with:ident, $k:ident $t:ident, $lsb:literal, $width:literal)) => {{
        let v = $vals[$n] & (u64::MAX >> (64 - $width));
        let w = check!($base, v, $reserved, set($with, $k $t, $lsb, $width));
        prop_assert_eq!(w.$get(), check!(@value $k $t, v));
    }};
    (@field $base:ident, $vals:ident, $n:ident, $reserved:ident, wo($with:ident, $k:ident $t:ident, $lsb:literal, $width:literal)) => {{
        let v = $vals[$n] & (u64::MAX >> (64 - $width));
        check!($base, v, $reserved, set($with, $k $t, $lsb, $width));
    }};
    (@field $base:ident, $vals:ident, $n:ident, $reserved:ident, ro($get:ident, $k:ident $t:ident, $lsb:literal, $width:literal)) => {{
        let v = ($base.to_raw() >> $lsb) & (u64::MAX >> (64 - $width));
        prop_assert_eq!($base.$get(), check!(@value $k $t, v));
    }};
    (@field $base:ident, $vals:ident, $n:ident, $reserved:ident, split($get:tt, $with:tt, $k:ident $t:ident, [$(($m:literal, $l:literal)),*], $width:literal)) => {{
        let ranges: &[(u32, u32)] = &[$(($m, $l)),*];
        let mask = scatter(ranges, u64::MAX);
        let v = $vals[$n] & (u64::MAX >> (64 - $width));
        layout!(@split_set $base, $reserved, $with, $get, $k $t, ranges, mask, v);
        layout!(@split_get $base, $get, $k $t, ranges, $width);
    }};
    (@split_set $base:ident, $reserved:ident, -, $get:tt, $k:ident $t:ident, $ranges:ident, $mask:ident, $v:ident) => {};
    (@split_set $base:ident, $reserved:ident, $with:ident, $get:tt, $k:ident $t:ident, $ranges:ident, $mask:ident, $v:ident) => {{
        // Written through the setter: the value lands in its ranges, every other bit stays.
        let x = check!(@value $k $t, $v);
        let w = $base.$with(x);
        prop_assert_eq!(w.to_raw() & $mask, scatter($ranges, raw_of!($k $t, x)));
        prop_assert_eq!(w.to_raw() & !$mask, $base.to_raw() & !$mask);
        prop_assert_eq!(w.to_raw() & $reserved, 0);
        layout!(@split_read w, $get, x);
    }};
    (@split_read $w:ident, -, $x:ident) => {};
    (@split_read $w:ident, $get:ident, $x:ident) => {
        prop_assert_eq!($w.$get(), $x);
    };
    (@split_get $base:ident, -, $k:ident $t:ident, $ranges:ident, $width:literal) => {};
    (@split_get $base:ident, $get:ident, $k:ident $t:ident, $ranges:ident, $width:literal) => {{
        // Read from a raw value: the getter gathers exactly the bits `scatter` places.
        let got = raw_of!($k $t, $base.$get());
        prop_assert_eq!(scatter($ranges, got), $base.to_raw() & scatter($ranges, u64::MAX));
    }};
    (@field $base:ident, $vals:ident, $n:ident, $reserved:ident, checked($try_with:ident, $t:ident, $width:literal)) => {{
        let max = u64::MAX >> (64 - $width);
        let wide = (max + 1 + $vals[$n] % ((<$t>::MAX as u64) - max)) as $t;
        let err = $base.$try_with(wide).unwrap_err();
        prop_assert_eq!((err.value, err.width), (wide as u64, $width));
        let ok = ($vals[$n] & max) as $t;
        prop_assert!($base.$try_with(ok).is_ok());
    }};
    (@field $base:ident, $vals:ident, $n:ident, $reserved:ident, rep($get:tt, $with:tt, $t:ident, $lsb:literal, $ew:literal, $max:literal)) => {{
        for k in 0..$max {
            let shift = $lsb + k * $ew;
            let emask = u64::MAX >> (64 - $ew);
            let v = $vals[$n].rotate_left(k) & emask;
            layout!(@rep_set $base, $reserved, $with, $get, $t, k, shift, emask, v);
            layout!(@rep_get $base, $get, $t, k, shift, emask);
        }
    }};
    (@rep_set $base:ident, $reserved:ident, -, $get:tt, $t:ident, $k:ident, $shift:ident, $emask:ident, $v:ident) => {};
    (@rep_set $base:ident, $reserved:ident, $with:ident, $get:tt, $t:ident, $k:ident, $shift:ident, $emask:ident, $v:ident) => {{
        let w = $base.$with($k, conv!($t, $v));
        prop_assert_eq!((w.to_raw() >> $shift) & $emask, $v);
        prop_assert_eq!(w.to_raw() & !($emask << $shift), $base.to_raw() & !($emask << $shift));
        prop_assert_eq!(w.to_raw() & $reserved, 0);
        layout!(@rep_read w, $get, $t, $k, $v);
    }};
    (@rep_read $w:ident, -, $t:ident, $k:ident, $v:ident) => {};
    (@rep_read $w:ident, $get:ident, $t:ident, $k:ident, $v:ident) => {
        prop_assert_eq!($w.$get($k), conv!($t, $v));
    };
    (@rep_get $base:ident, -, $t:ident, $k:ident, $shift:ident, $emask:ident) => {};
    (@rep_get $base:ident, $get:ident, $t:ident, $k:ident, $shift:ident, $emask:ident) => {
        prop_assert_eq!($base.$get($k), conv!($t, ($base.to_raw() >> $shift) & $emask));
    };
}

