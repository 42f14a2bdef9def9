//! The spec's closed vocabularies (access kinds, address spaces, roles, scopes, counter
//! kinds), each kept once: a table of variant, spec spelling and documentation.
//!
//! `vocabulary!` turns one table into the model's enum (with `parse`, `as_str`, `variant`)
//! and a [`Vocabulary`] value; the emitters write the generated crate's enums from that value
//! (`emit::rust::vocabulary_enum`) and fill the JSON schema's enumerations from it, and a test
//! checks `spec/schema.xsd` and `spec/README.md` against it. A new role is added here, in
//! `schema.xsd` and in `spec/README.md`; the test names whichever of the two was forgotten.

/// One word of a vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Term {
    /// The Rust variant (`OverflowEnable`).
    pub variant: &'static str,
    /// The spec's spelling (`overflow-enable`).
    pub spelling: &'static str,
    /// Its documentation, one line per `///` line, each with the leading space rustdoc keeps.
    pub doc: &'static str,
}

/// A vocabulary: the enum's name and documentation and its words, in table order.
#[derive(Debug, Clone, Copy)]
pub struct Vocabulary {
    /// The enum's name, the same in the model and in the generated crate (`Role`).
    pub name: &'static str,
    /// The enum's documentation, as [`Term::doc`].
    pub doc: &'static str,
    /// Its words.
    pub terms: &'static [Term],
}

impl Vocabulary {
    /// The spec spellings, in table order.
    pub fn spellings(&self) -> impl Iterator<Item = &'static str> {
        self.terms.iter().map(|t| t.spelling)
    }
}

/// Declares a vocabulary: `Variant = "spelling"` lines, each with its `///` doc.
macro_rules! vocabulary {
    (
        $(#[doc = $doc:literal])*
        pub enum $name:ident {
            $( $(#[doc = $vdoc:literal])* $variant:ident = $spelling:literal, )*
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[doc = $vdoc])* $variant, )*
        }

        impl $name {
            /// Every value with its spec spelling, in table order.
            pub const ALL: &'static [($name, &'static str)] = &[$(($name::$variant, $spelling)),*];

            /// The table the generated enum and the schemas' enumerations come from.
            pub const VOCABULARY: $crate::model::vocab::Vocabulary =
                $crate::model::vocab::Vocabulary {
                    name: stringify!($name),
                    doc: concat!($($doc, "\n"),*),
                    terms: &[$($crate::model::vocab::Term {
                        variant: stringify!($variant),
                        spelling: $spelling,
                        doc: concat!($($vdoc, "\n"),*),
                    }),*],
                };

            /// Parses the spec spelling.
            pub fn parse(s: &str) -> Option<Self> {
                Self::ALL.iter().find(|(_, n)| *n == s).map(|(v, _)| *v)
            }

            /// The spec spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $spelling,)*
                }
            }

            /// The variant's name, in the model and the generated enum alike.
            pub fn variant(self) -> &'static str {
                match self {
                    $($name::$variant => stringify!($variant),)*
                }
            }
        }

        /// In JSON, the spec spelling.
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}
pub(crate) use vocabulary;

#[cfg(test)]
mod tests {
    //! The hand-kept places that spell each vocabulary again agree with the table.

    fn read(relative: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The `xs:enumeration` values of the first restriction after `anchor` in the XSD.
    fn xsd_enumeration(xsd: &str, anchor: &str) -> Vec<String> {
        let start = xsd
            .find(anchor)
            .unwrap_or_else(|| panic!("schema.xsd has no {anchor}"));
        let rest = &xsd[start..];
        let end = rest.find("</xs:restriction>").expect("a restriction");
        rest[..end]
            .split("<xs:enumeration value=\"")
            .skip(1)
            .map(|s| s[..s.find('"').expect("a closing quote")].to_string())
            .collect()
    }

    #[test]
    fn schema_xsd_spells_every_vocabulary_as_the_table_does() {
        let xsd = read("../spec/schema.xsd");
        for (vocab, anchor) in [
            (
                &crate::model::Vendor::VOCABULARY,
                "<xs:simpleType name=\"vendor\">",
            ),
            (
                &crate::model::Space::VOCABULARY,
                "<xs:simpleType name=\"space\">",
            ),
            (
                &crate::model::Access::VOCABULARY,
                "<xs:simpleType name=\"access\">",
            ),
            (
                &crate::model::pmu::Role::VOCABULARY,
                "<xs:simpleType name=\"role\">",
            ),
            (
                &crate::model::pmu::Scope::VOCABULARY,
                "<xs:attribute name=\"scope\"",
            ),
            (
                &crate::model::pmu::CounterKind::VOCABULARY,
                "<xs:simpleType name=\"counterKind\">",
            ),
        ] {
            let table: Vec<&str> = vocab.spellings().collect();
            assert_eq!(
                xsd_enumeration(&xsd, anchor),
                table,
                "spec/schema.xsd's {anchor} and codegen/src/model's {} table differ",
                vocab.name
            );
        }
    }

    #[test]
    fn json_schema_enumerations_are_the_tables() {
        let schema: serde_json::Value =
            serde_json::from_str(&crate::emit::json::schema()).expect("the schema is JSON");
        let defs = &schema["$defs"];
        let field = &defs["field"]["properties"];
        let pmu = &defs["pmu"]["properties"];
        for (vocab, at) in [
            (&crate::model::Space::VOCABULARY, &defs["space"]),
            (&crate::model::Access::VOCABULARY, &field["access"]),
            (&crate::model::pmu::Role::VOCABULARY, &defs["role"]),
            (&crate::model::pmu::Scope::VOCABULARY, &pmu["scope"]),
            (
                &crate::model::pmu::CounterKind::VOCABULARY,
                &pmu["counters"]["items"]["properties"]["kind"],
            ),
        ] {
            let table: Vec<&str> = vocab.spellings().collect();
            let listed: Vec<&str> = at["enum"]
                .as_array()
                .unwrap_or_else(|| panic!("model.schema.json: no enum for {}", vocab.name))
                .iter()
                .map(|v| v.as_str().expect("a string"))
                .collect();
            assert_eq!(listed, table, "model.schema.json's {} enum", vocab.name);
        }
    }

    #[test]
    fn spec_readme_documents_every_access_kind_and_role() {
        let readme = read("../spec/README.md");
        for vocab in [
            &crate::model::Access::VOCABULARY,
            &crate::model::pmu::Role::VOCABULARY,
        ] {
            for spelling in vocab.spellings() {
                assert!(
                    readme.contains(&format!("`{spelling}`")),
                    "spec/README.md does not document {} `{spelling}`",
                    vocab.name
                );
            }
        }
    }

    #[test]
    fn every_term_has_a_doc_and_a_distinct_spelling() {
        for vocab in crate::model::VOCABULARIES {
            assert!(!vocab.doc.trim().is_empty(), "{} has no doc", vocab.name);
            for (i, t) in vocab.terms.iter().enumerate() {
                assert!(
                    !t.doc.trim().is_empty(),
                    "{}::{} has no doc",
                    vocab.name,
                    t.variant
                );
                assert!(
                    vocab.terms[..i].iter().all(|o| o.spelling != t.spelling),
                    "{} spells two variants `{}`",
                    vocab.name,
                    t.spelling
                );
            }
        }
    }
}
