//! Properties of every generated register layout, driven through the public accessors:
//! set-then-get returns the value; setting one field changes no other bit; no setter sets a
//! reserved bit; a checked setter refuses a value too wide. One `layout!` per register,
//! one line per field, and one `layouts!` per unit naming them, written by codegen.
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
        same((w.to_raw() & mask) >> $lsb, raw_of!($k $t, x), concat!(stringify!($with), " writes the value in its bits"))?;
        same(w.to_raw() & !mask, $base.to_raw() & !mask, concat!(stringify!($with), " leaves the other bits"))?;
        same(w.to_raw() & $reserved, 0, concat!(stringify!($with), " sets no reserved bit"))?;
        w
    }};
    (@value named $t:ident, $v:expr) => { $t::from_bits($v as u8) };
    (@value $k:ident $t:ident, $v:expr) => { conv!($t, $v) };
}

/// `Ok` when `got == want`; otherwise a failure naming the check and both values. A function,
/// not `prop_assert_eq!`, whose expansion at every check was most of this file's build time.
fn same<T: PartialEq + core::fmt::Debug>(got: T, want: T, what: &str) -> Result<(), TestCaseError> {
    if got == want {
        Ok(())
    } else {
        Err(TestCaseError::fail(format!("{what}: got {got:?}, want {want:?}")))
    }
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

/// One property test per unit: each case draws a raw value and one value per field (a
/// register has at most 64 fields; the Skylake-SP global status has 45) and checks every
/// layout of the unit with them, a failure naming its register. One `proptest!` per unit,
/// not per register: expanding it for each of several hundred registers was most of this
/// crate's test build.
macro_rules! layouts {
    ($($name:ident),* $(,)?) => {
        proptest! {
            #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]
            #[test]
            fn layouts(raw in any::<u64>(), vals in proptest::collection::vec(any::<u64>(), 64)) {
                type Case = fn(u64, &[u64]) -> Result<(), TestCaseError>;
                let cases: &[(&str, Case)] = &[$((stringify!($name), $name)),*];
                for (name, case) in cases {
                    case(raw, &vals).map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
                }
            }
        }
    };
}

/// The checks of one register layout, as a function of the drawn raw value and field values.
macro_rules! layout {
    ($name:ident: $ty:ty; $($kind:ident($($args:tt)*);)*) => {
        fn $name(raw: u64, vals: &[u64]) -> Result<(), TestCaseError> {
            let base = <$ty>::from_raw(raw);
            let reserved = <$ty>::RESERVED_MASK as u64;
            // from_raw never keeps a reserved bit, and the metadata agrees with the type.
            same(base.to_raw() & reserved, 0, "from_raw keeps no reserved bit")?;
            #[cfg(feature = "metadata")]
            same(reserved, <$ty as Register>::INFO.reserved_mask, "RESERVED_MASK is the metadata's")?;
            same(<$ty>::RESERVED_MASK & <$ty>::WRITABLE_MASK, 0, "no bit is both reserved and writable")?;
            // try_from_bits takes the register's own integer: compare within its width.
            let width_mask = u64::MAX >> (64 - 8 * core::mem::size_of_val(&base.bits()));
            same(<$ty>::try_from_bits(raw as _).is_ok(), raw & width_mask & reserved == 0, "try_from_bits refuses reserved bits only")?;
            let mut n = 0usize;
            $(
                layout!(@field base, vals, n, reserved, $kind($($args)*));
                n += 1;
            )*
            let _ = n;
            Ok(())
        }
    };
    (@field $base:ident, $vals:ident, $n:ident, $reserved:ident, rw($get:ident, $with:ident, $k:ident $t:ident, $lsb:literal, $width:literal)) => {{
        let v = $vals[$n] & (u64::MAX >> (64 - $width));
        let w = check!($base, v, $reserved, set($with, $k $t, $lsb, $width));
        same(w.$get(), check!(@value $k $t, v), concat!(stringify!($get), " reads what ", stringify!($with), " wrote"))?;
    }};
    (@field $base:ident, $vals:ident, $n:ident, $reserved:ident, wo($with:ident, $k:ident $t:ident, $lsb:literal, $width:literal)) => {{
        let v = $vals[$n] & (u64::MAX >> (64 - $width));
        check!($base, v, $reserved, set($with, $k $t, $lsb, $width));
    }};
    (@field $base:ident, $vals:ident, $n:ident, $reserved:ident, ro($get:ident, $k:ident $t:ident, $lsb:literal, $width:literal)) => {{
        let v = ($base.to_raw() >> $lsb) & (u64::MAX >> (64 - $width));
        same($base.$get(), check!(@value $k $t, v), concat!(stringify!($get), " reads its bits"))?;
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
        same(w.to_raw() & $mask, scatter($ranges, raw_of!($k $t, x)), concat!(stringify!($with), " writes the value in its ranges"))?;
        same(w.to_raw() & !$mask, $base.to_raw() & !$mask, concat!(stringify!($with), " leaves the other bits"))?;
        same(w.to_raw() & $reserved, 0, concat!(stringify!($with), " sets no reserved bit"))?;
        layout!(@split_read w, $get, x);
    }};
    (@split_read $w:ident, -, $x:ident) => {};
    (@split_read $w:ident, $get:ident, $x:ident) => {
        same($w.$get(), $x, concat!(stringify!($get), " reads the value written"))?;
    };
    (@split_get $base:ident, -, $k:ident $t:ident, $ranges:ident, $width:literal) => {};
    (@split_get $base:ident, $get:ident, $k:ident $t:ident, $ranges:ident, $width:literal) => {{
        // Read from a raw value: the getter gathers exactly the bits `scatter` places.
        let got = raw_of!($k $t, $base.$get());
        same(scatter($ranges, got), $base.to_raw() & scatter($ranges, u64::MAX), concat!(stringify!($get), " gathers its ranges"))?;
    }};
    (@field $base:ident, $vals:ident, $n:ident, $reserved:ident, checked($try_with:ident, $t:ident, $width:literal)) => {{
        let max = u64::MAX >> (64 - $width);
        let wide = (max + 1 + $vals[$n] % ((<$t>::MAX as u64) - max)) as $t;
        let err = $base.$try_with(wide).unwrap_err();
        same((err.value, err.width), (wide as u64, $width), concat!(stringify!($try_with), " names the value and width refused"))?;
        let ok = ($vals[$n] & max) as $t;
        same($base.$try_with(ok).is_ok(), true, concat!(stringify!($try_with), " takes a value that fits"))?;
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
        same((w.to_raw() >> $shift) & $emask, $v, concat!(stringify!($with), " writes the element in its bits"))?;
        same(w.to_raw() & !($emask << $shift), $base.to_raw() & !($emask << $shift), concat!(stringify!($with), " leaves the other bits"))?;
        same(w.to_raw() & $reserved, 0, concat!(stringify!($with), " sets no reserved bit"))?;
        layout!(@rep_read w, $get, $t, $k, $v);
    }};
    (@rep_read $w:ident, -, $t:ident, $k:ident, $v:ident) => {};
    (@rep_read $w:ident, $get:ident, $t:ident, $k:ident, $v:ident) => {
        same($w.$get($k), conv!($t, $v), concat!(stringify!($get), " reads the element written"))?;
    };
    (@rep_get $base:ident, -, $t:ident, $k:ident, $shift:ident, $emask:ident) => {};
    (@rep_get $base:ident, $get:ident, $t:ident, $k:ident, $shift:ident, $emask:ident) => {
        same($base.$get($k), conv!($t, ($base.to_raw() >> $shift) & $emask), concat!(stringify!($get), " reads its element"))?;
    };
}

