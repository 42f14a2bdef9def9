//! Memory-mapped registers: the unit's `<mmio-window>` (how the window's physical base is
//! assembled from PCI config registers, its size and strides) and the rules that tie each
//! `<mmio>` address to it.

use std::collections::HashMap;

use super::unit::RegisterScope;
use super::*;

/// The config-space limit a base part's dword must stay inside.
const CONFIG_SPACE: u64 = 0x1000;

impl Validator {
    /// The unit's `<mmio-window>`, if it declares one (at most one).
    pub(super) fn mmio_window(
        &mut self,
        ctx: &Ctx<'_>,
        raw: &RawUnit,
        cat: &Catalogue,
    ) -> Option<MmioWindow> {
        let (first, rest) = raw.mmio_window.split_first()?;
        for extra in rest {
            self.push(ctx.error(
                extra.at,
                format!("unit `{}` declares a second <mmio-window>", raw.name),
                "a unit's boxes share one window layout: split the unit, or keep one window",
            ));
        }
        self.public_source(ctx, cat, first.at, &first.source);
        let shape = self.window_shape(ctx, first)?;
        let base = &first.base;
        let device = self.base_device(ctx, base);
        let parts = self.base_parts(ctx, base, shape.controllers);
        let (device_id, device, function) = device?;
        Some(MmioWindow {
            device_id,
            device,
            function,
            parts: parts?,
            offset: shape.offset,
            channel_stride: shape.channel_stride,
            size: shape.size,
            controllers: shape.controllers,
            channels: shape.channels,
            source: first.source.clone(),
            description: normalize_text(&first.description),
        })
    }

    /// Offset, size, strides and counts: numbers, non-empty, channel windows apart.
    fn window_shape(&mut self, ctx: &Ctx<'_>, w: &RawMmioWindow) -> Option<WindowShape> {
        let count = |s: &str| parse_number(s).filter(|n| (1..=255).contains(n));
        let (Some(controllers), Some(channels)) = (count(&w.controllers), count(&w.channels))
        else {
            self.push(ctx.error(
                w.at,
                "controllers and channels must each be 1 to 255",
                "count the memory controllers (bases) and the channel windows of each",
            ));
            return None;
        };
        let (Some(offset), Some(size)) = (parse_number(&w.offset), parse_number(&w.size)) else {
            self.push(ctx.error(
                w.at,
                "the window's offset and size must be numbers",
                "write them as 0x hex or decimal",
            ));
            return None;
        };
        if size == 0 || !size.is_multiple_of(8) {
            self.push(ctx.error(
                w.at,
                format!("window size {size:#x} is not a positive multiple of 8 bytes"),
                "the size is what is mapped for one channel, e.g. 0x4000",
            ));
            return None;
        }
        let channel_stride = match w.channel_stride.as_deref().map(parse_number) {
            None if channels == 1 => 0,
            Some(Some(s)) if s >= size => s,
            _ => {
                self.push(ctx.error(
                    w.at,
                    format!("{channels} channel windows of {size:#x} bytes need a channel-stride of at least the size"),
                    "channel h's window starts at base + offset + h * channel-stride; windows may not overlap",
                ));
                return None;
            }
        };
        Some(WindowShape {
            offset,
            channel_stride,
            size,
            controllers: controllers as u8,
            channels: channels as u8,
        })
    }

    /// The device whose config registers hold the base.
    fn base_device(&mut self, ctx: &Ctx<'_>, b: &RawMmioBase) -> Option<(u16, u8, u8)> {
        let num = |s: &str, max: u64| parse_number(s).filter(|v| *v <= max);
        match (
            num(&b.device_id, 0xFFFF),
            num(&b.device, 31),
            num(&b.function, 7),
        ) {
            (Some(id), Some(dev), Some(func)) => Some((id as u16, dev as u8, func as u8)),
            _ => {
                self.push(ctx.error(
                    b.at,
                    "the base's PCI device is out of range",
                    "device-id is 16-bit, device 0-31, function 0-7",
                ));
                None
            }
        }
    }

    /// The base's parts: dwords inside config space for every controller, bits inside the
    /// dword, landing inside 64 bits and on bits no other part sets.
    fn base_parts(
        &mut self,
        ctx: &Ctx<'_>,
        b: &RawMmioBase,
        controllers: u8,
    ) -> Option<Vec<MmioBasePart>> {
        if b.part.is_empty() {
            self.push(ctx.error(
                b.at,
                "the base has no <part>",
                "add one <part offset=\"..\" bits=\"msb:lsb\" shift=\"..\"/> per config register the base is built from",
            ));
            return None;
        }
        let mut parts: Vec<MmioBasePart> = Vec::new();
        for p in &b.part {
            let Some(part) = self.base_part(ctx, p, controllers) else {
                continue;
            };
            if let Some(other) = parts.iter().find(|o| o.base_mask() & part.base_mask() != 0) {
                self.push(ctx.error(
                    p.at,
                    format!(
                        "this part sets base bits {:#x}, which the part at offset {:#x} sets too",
                        part.base_mask() & other.base_mask(),
                        other.offset
                    ),
                    "the parts are ORed together: each must fill bits of the base no other part fills",
                ));
                continue;
            }
            parts.push(part);
        }
        (parts.len() == b.part.len()).then_some(parts)
    }

    fn base_part(
        &mut self,
        ctx: &Ctx<'_>,
        p: &RawMmioPart,
        controllers: u8,
    ) -> Option<MmioBasePart> {
        let offset = parse_number(&p.offset);
        let stride = p.controller_stride.as_deref().map_or(Some(0), parse_number);
        let (Some(offset), Some(stride)) = (offset, stride) else {
            self.push(ctx.error(
                p.at,
                "the part's offset and controller-stride must be numbers",
                "write them as 0x hex or decimal",
            ));
            return None;
        };
        let last = offset + stride * u64::from(controllers - 1);
        if !offset.is_multiple_of(4) || !stride.is_multiple_of(4) || last + 4 > CONFIG_SPACE {
            self.push(ctx.error(
                p.at,
                format!("the part's dword (offset {offset:#x}, last controller at {last:#x}) is not dword-aligned inside the 4 KiB config space"),
                "offsets and controller-stride are multiples of 4, and every controller's dword lies below 0x1000",
            ));
            return None;
        }
        let bits = parse_bits(&p.bits).filter(|(msb, lsb)| lsb <= msb && *msb < 32);
        let shift = parse_number(&p.shift).filter(|s| *s < 64);
        let (Some((msb, lsb)), Some(shift)) = (bits, shift) else {
            self.push(ctx.error(
                p.at,
                format!("bits `{}` must be msb:lsb inside the 32-bit dword, and shift below 64", p.bits),
                "a part takes bits msb:lsb of its dword and moves bit lsb to bit `shift` of the base",
            ));
            return None;
        };
        if u64::from(msb - lsb) + 1 + shift > 64 {
            self.push(ctx.error(
                p.at,
                format!("bits {msb}:{lsb} shifted to bit {shift} run past bit 63 of the base"),
                "check the shift against the source's mask",
            ));
            return None;
        }
        Some(MmioBasePart {
            offset: offset as u16,
            controller_stride: stride as u16,
            lsb,
            msb,
            shift: shift as u32,
        })
    }

    /// An `<mmio>` address: the register's space is `mmio`, the unit has a window, the
    /// controller and channel exist, and the offset is aligned to the register's width.
    pub(super) fn mmio_location(
        &mut self,
        reg: &RegisterScope<'_>,
        m: &RawMmio,
    ) -> Option<Location> {
        if reg.space != Space::Mmio {
            self.push(reg.ctx.error(
                m.at,
                "an <mmio> address on a register that is not in MMIO space",
                "set space=\"mmio\", or use <msr>/<pci> elements",
            ));
        }
        let Some(window) = reg.window else {
            if reg.window_declared {
                return None; // the window's own error says what is wrong with it
            }
            self.push(reg.ctx.error(
                m.at,
                "an <mmio> address in a unit without <mmio-window>",
                "declare the unit's <mmio-window> after its instances: the device and bits its base comes from",
            ));
            return None;
        };
        let controller = parse_number(&m.controller).filter(|c| *c < u64::from(window.controllers));
        let channel = m
            .channel
            .as_deref()
            .map_or(Some(0), parse_number)
            .filter(|h| *h < u64::from(window.channels));
        let (Some(controller), Some(channel)) = (controller, channel) else {
            self.push(reg.ctx.error(
                m.at,
                format!(
                    "controller `{}` or channel `{}` is outside the window's {} controllers and {} channels",
                    m.controller,
                    m.channel.as_deref().unwrap_or("0"),
                    window.controllers,
                    window.channels
                ),
                "controllers and channels are numbered from 0",
            ));
            return None;
        };
        let Some(offset) = parse_number(&m.offset).filter(|o| *o <= u64::from(u32::MAX)) else {
            self.push(reg.ctx.error(
                m.at,
                format!("MMIO offset `{}` is not a 32-bit number", m.offset),
                "the offset is in bytes from the start of the channel's window",
            ));
            return None;
        };
        Some(Location::Mmio {
            controller: controller as u8,
            channel: channel as u8,
            offset: offset as u32,
        })
    }

    /// Element `n` of an `<mmio>` address, `delta` bytes past its offset: aligned to the
    /// register's width and inside the window.
    pub(super) fn mmio_element(
        &mut self,
        reg: &RegisterScope<'_>,
        at: usize,
        base: Location,
        delta: u64,
        n: u32,
    ) -> Option<Location> {
        let Location::Mmio {
            controller,
            channel,
            offset,
        } = base
        else {
            return None;
        };
        let bytes = u64::from(reg.width / 8);
        let off = u64::from(offset) + delta;
        let size = reg.window.map_or(0, |w| w.size);
        if !off.is_multiple_of(bytes) || off + bytes > size {
            let which = if reg.count > 1 {
                format!("index {n} at offset {off:#x}")
            } else {
                format!("offset {off:#x}")
            };
            self.push(reg.ctx.error(
                at,
                format!("{which} is not {bytes}-byte aligned inside the {size:#x}-byte window"),
                "a register lies wholly inside its channel's window, on a multiple of its width",
            ));
            return None;
        }
        Some(Location::Mmio {
            controller,
            channel,
            offset: off as u32,
        })
    }

    /// A declared window is used, and each box is one window.
    pub(super) fn mmio_use(
        &mut self,
        ctx: &Ctx<'_>,
        raw: &RawUnit,
        window: Option<&MmioWindow>,
        instances: &[Instance],
        registers: &[Register],
    ) {
        let uses = raw.register.iter().any(|r| !r.mmio.is_empty());
        if let (Some(_), false, Some(w)) = (window, uses, raw.mmio_window.first()) {
            self.push(ctx.error(
                w.at,
                format!("unit `{}` declares an <mmio-window> but no register has an <mmio> address", raw.name),
                "remove the window, or give the memory-mapped registers space=\"mmio\" and <mmio> addresses",
            ));
        }
        self.mmio_instances(ctx, raw.at, instances, registers);
    }

    /// Every box of a unit is one window: all `<mmio>` addresses of an instance name the same
    /// controller and channel.
    fn mmio_instances(
        &mut self,
        ctx: &Ctx<'_>,
        unit_at: usize,
        instances: &[Instance],
        registers: &[Register],
    ) {
        let mut seen: HashMap<usize, (u8, u8, String)> = HashMap::new();
        for r in registers {
            let Addresses::Known(addrs) = &r.addresses else {
                continue;
            };
            for a in addrs {
                let Location::Mmio {
                    controller,
                    channel,
                    ..
                } = a.location
                else {
                    continue;
                };
                let name = r.concrete_name(&instances[a.instance], a.index);
                match seen.get(&a.instance) {
                    Some((c, h, first)) if (*c, *h) != (controller, channel) => {
                        self.push(ctx.error(
                            unit_at,
                            format!(
                                "instance {}: {name} is in controller {controller} channel {channel}, but {first} in controller {c} channel {h}",
                                instances[a.instance].name
                            ),
                            "a box is one window: give every register of an instance the same controller and channel",
                        ));
                        return;
                    }
                    Some(_) => {}
                    None => {
                        seen.insert(a.instance, (controller, channel, name));
                    }
                }
            }
        }
    }

    /// No two memory-mapped registers of a processor overlap: offsets are compared from the
    /// base they are built on (device, controller), across units, a dword at a time.
    pub(super) fn check_mmio_overlaps(&mut self, p: &Processor) {
        type Key = (u16, u8, u8, u8, u64);
        let mut seen: HashMap<Key, (String, String)> = HashMap::new();
        for u in &p.units {
            let Some(w) = &u.mmio_window else { continue };
            for r in &u.registers {
                let Addresses::Known(addrs) = &r.addresses else {
                    continue;
                };
                for a in addrs {
                    let Location::Mmio {
                        controller,
                        channel,
                        offset,
                    } = a.location
                    else {
                        continue;
                    };
                    let from_base = w.offset_from_base(channel, offset);
                    let name = r.address_name(u, a);
                    for dword in (0..u64::from(r.width / 32)).map(|d| from_base + 4 * d) {
                        let key = (w.device_id, w.device, w.function, controller, dword);
                        if let Some((other, file)) = seen.get(&key) {
                            self.push(
                                Diagnostic {
                                    path: r.at.path.to_path_buf(),
                                    line: r.at.line,
                                    column: r.at.column,
                                    message: format!("register {}: {name} overlaps {other} ({file}): both cover base + {dword:#x} of controller {controller}", r.name),
                                    help: None,
                                }
                                .help("two memory-mapped registers cannot share bytes; check the offsets, the window offset and the channel stride"),
                            );
                            break;
                        }
                        seen.insert(key, (name.clone(), u.file.clone()));
                    }
                }
            }
        }
    }
}

/// A window's numbers, checked.
struct WindowShape {
    offset: u64,
    channel_stride: u64,
    size: u64,
    controllers: u8,
    channels: u8,
}
