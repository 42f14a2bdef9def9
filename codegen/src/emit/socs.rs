//! The crate root's `SOCS`: every `<soc>` of the spec, as the processors it is made of and the
//! SMCCC SOC_ID that recognises it. Processors are named by id, so the table needs no
//! processor's feature.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::Spec;

/// `SOCS` and `soc_for_soc_id`, for the crate root.
pub fn socs_table(spec: &Spec) -> TokenStream {
    let items = spec.socs.iter().map(|s| {
        let (id, name, cores, source) = (&s.id, &s.name, &s.cores, &s.source);
        let uncore = &s.uncore;
        let soc_id = match (&s.soc_id, &s.soc_id_source) {
            (Some(v), Some(src)) => quote!(Some((#v, #src))),
            _ => quote!(None),
        };
        quote! {
            support::SocInfo {
                id: #id,
                name: #name,
                cores: #cores,
                uncore: &[#(#uncore),*],
                soc_id: #soc_id,
                source: #source,
            }
        }
    });
    quote! {
        /// Every SoC the spec composes from its processors: its cores' processor, its other
        /// PMUs' processors, and the SMCCC SOC_ID that recognises it where a public source
        /// gives one.
        #[cfg(feature = "metadata")]
        pub static SOCS: &[support::SocInfo] = &[#(#items),*];

        /// The SoC whose SMCCC SOC_ID (`/sys/devices/soc0/soc_id`, e.g. `jep106:036b:0241`)
        /// is `soc_id`, if the spec knows it.
        #[cfg(feature = "metadata")]
        pub fn soc_for_soc_id(soc_id: &str) -> Option<&'static support::SocInfo> {
            SOCS.iter().find(|s| s.claims(soc_id))
        }
    }
}
