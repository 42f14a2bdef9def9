//! A validator for the part of XML Schema that `spec/schema.xsd` uses, so that the schema
//! tests need no system tool (xmllint). It reads the schema itself: element, complexType,
//! simpleType, sequence, choice, attribute, simpleContent/extension, and restrictions with
//! pattern and enumeration facets, over the built-in types below. A schema construct outside
//! that set is refused when the schema is loaded, so a schema change can never be skipped
//! silently: extend this file instead.
//!
//! What it checks, as xmllint does: the root element is declared; every element's children
//! match its content model (order, minOccurs/maxOccurs, choices); element-only content has no
//! text; every attribute is declared, required ones are present, and every attribute value and
//! simple-content text matches its type (patterns are anchored, as XSD requires).

use std::collections::{BTreeSet, HashMap};

use regex::Regex;
use roxmltree::{Document, Node};

const XS: &str = "http://www.w3.org/2001/XMLSchema";

/// A parsed schema.
pub struct Schema {
    doc: Document<'static>,
    patterns: HashMap<String, Regex>,
    /// The furthest child any element particle matched, for pointing at the offending one.
    furthest: std::cell::Cell<usize>,
}

fn xs<'a, 'i>(node: Node<'a, 'i>, name: &str) -> bool {
    node.is_element() && node.tag_name().namespace() == Some(XS) && node.tag_name().name() == name
}

fn xs_children<'a, 'i>(node: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children().filter(|c| c.is_element())
}

/// `xs:string` -> `string`; types of our schema have no prefix.
fn local(name: &str) -> (bool, &str) {
    match name.strip_prefix("xs:") {
        Some(b) => (true, b),
        None => (false, name),
    }
}

const BUILTINS: [&str; 5] = [
    "string",
    "positiveInteger",
    "nonNegativeInteger",
    "integer",
    "boolean",
];

fn occurs(node: Node, attr: &str, default: u64) -> Option<u64> {
    match node.attribute(attr) {
        None => Some(default),
        Some("unbounded") => None,
        Some(n) => Some(n.parse().expect("minOccurs/maxOccurs is a number")),
    }
}

impl Schema {
    /// Loads a schema, refusing every construct this validator does not implement.
    pub fn load(text: &str) -> Result<Schema, String> {
        let text: &'static str = Box::leak(text.to_string().into_boxed_str());
        let doc = Document::parse(text).map_err(|e| format!("schema: {e}"))?;
        let mut patterns = HashMap::new();
        for n in doc.descendants().filter(|n| n.is_element()) {
            if n.tag_name().namespace() != Some(XS) {
                return Err(format!("schema: element {:?} outside XSD", n.tag_name()));
            }
            let name = n.tag_name().name();
            const KNOWN: [&str; 13] = [
                "schema",
                "element",
                "complexType",
                "simpleType",
                "sequence",
                "choice",
                "attribute",
                "simpleContent",
                "extension",
                "restriction",
                "pattern",
                "enumeration",
                "annotation",
            ];
            if !KNOWN.contains(&name) && name != "documentation" {
                return Err(format!(
                    "schema uses xs:{name}, which tests/xsd does not implement: extend it"
                ));
            }
            for a in n.attributes() {
                let ok = matches!(
                    (name, a.name()),
                    ("schema", "elementFormDefault")
                        | ("element", "name" | "type" | "minOccurs" | "maxOccurs")
                        | ("complexType" | "simpleType", "name")
                        | ("sequence" | "choice", "minOccurs" | "maxOccurs")
                        | ("attribute", "name" | "type" | "use")
                        | ("extension" | "restriction", "base")
                        | ("pattern" | "enumeration", "value")
                );
                if !ok {
                    return Err(format!(
                        "schema uses attribute {} on xs:{name}, which tests/xsd does not implement",
                        a.name()
                    ));
                }
            }
            if name == "attribute" && n.attribute("use").is_some_and(|u| u != "required") {
                return Err(format!(
                    "schema: use={:?} is not implemented",
                    n.attribute("use")
                ));
            }
            for t in ["type", "base"] {
                if let Some((true, b)) = n.attribute(t).map(local) {
                    if !BUILTINS.contains(&b) {
                        return Err(format!(
                            "schema uses xs:{b}, which tests/xsd does not implement"
                        ));
                    }
                }
            }
            if name == "pattern" {
                let p = n.attribute("value").unwrap_or_default();
                let re = Regex::new(&format!("^(?:{p})$"))
                    .map_err(|e| format!("schema pattern {p:?}: {e}"))?;
                patterns.insert(p.to_string(), re);
            }
        }
        let schema = Schema {
            doc,
            patterns,
            furthest: Default::default(),
        };
        // Every type named anywhere exists.
        for n in schema.doc.descendants().filter(|n| n.is_element()) {
            for t in ["type", "base"] {
                if let Some((false, name)) = n.attribute(t).map(local) {
                    if schema.named("complexType", name).is_none()
                        && schema.named("simpleType", name).is_none()
                    {
                        return Err(format!("schema: type {name} is not defined"));
                    }
                }
            }
        }
        Ok(schema)
    }

    fn named(&self, kind: &str, name: &str) -> Option<Node<'_, 'static>> {
        xs_children(self.doc.root_element())
            .find(|n| xs(*n, kind) && n.attribute("name") == Some(name))
    }

    /// Validates one document; returns every problem found, each with its line.
    pub fn validate(&self, text: &str) -> Vec<String> {
        let doc = match Document::parse(text) {
            Ok(d) => d,
            Err(e) => return vec![format!("not well-formed: {e}")],
        };
        let mut errors = Vec::new();
        let root = doc.root_element();
        match self.named("element", root.tag_name().name()) {
            Some(decl) => self.element(decl, root, &mut errors),
            None => errors.push(format!(
                "line 1: root element <{}> is not declared in the schema",
                root.tag_name().name()
            )),
        }
        errors
    }

    fn element(&self, decl: Node<'_, 'static>, el: Node, errors: &mut Vec<String>) {
        let line = el.document().text_pos_at(el.range().start).row;
        let at = format!("line {line}: <{}>", el.tag_name().name());
        if let Some(t) = decl.attribute("type") {
            match local(t) {
                (false, name) if self.named("complexType", name).is_some() => {
                    self.complex(self.named("complexType", name).unwrap(), el, &at, errors)
                }
                _ => self.simple_element(t, None, el, &at, errors),
            }
        } else if let Some(ct) = xs_children(decl).find(|c| xs(*c, "complexType")) {
            self.complex(ct, el, &at, errors)
        } else if let Some(st) = xs_children(decl).find(|c| xs(*c, "simpleType")) {
            self.simple_element("", Some(st), el, &at, errors)
        }
        // No type at all: xs:anyType, anything goes.
    }

    fn simple_element(
        &self,
        type_name: &str,
        inline: Option<Node<'_, 'static>>,
        el: Node,
        at: &str,
        errors: &mut Vec<String>,
    ) {
        if let Some(c) = xs_children_of(el).next() {
            errors.push(format!(
                "{at}: element <{}> is not allowed: the content is text only",
                c.tag_name().name()
            ));
        }
        if el.attributes().len() > 0 {
            errors.push(format!("{at}: attributes are not allowed here"));
        }
        let text = text_of(el);
        self.check_simple(type_name, inline, &text, &format!("{at} content"), errors);
    }

    fn complex(&self, ct: Node<'_, 'static>, el: Node, at: &str, errors: &mut Vec<String>) {
        let mut attribute_decls: Vec<Node> =
            xs_children(ct).filter(|c| xs(*c, "attribute")).collect();
        if let Some(sc) = xs_children(ct).find(|c| xs(*c, "simpleContent")) {
            let ext = xs_children(sc)
                .find(|c| xs(*c, "extension"))
                .expect("simpleContent has an extension");
            attribute_decls.extend(xs_children(ext).filter(|c| xs(*c, "attribute")));
            if let Some(c) = xs_children_of(el).next() {
                errors.push(format!(
                    "{at}: element <{}> is not allowed: the content is text only",
                    c.tag_name().name()
                ));
            }
            self.check_simple(
                ext.attribute("base").unwrap_or("xs:string"),
                None,
                &text_of(el),
                &format!("{at} content"),
                errors,
            );
        } else {
            if let Some(t) = el
                .children()
                .find(|c| c.is_text() && !c.text().unwrap_or("").trim().is_empty())
            {
                errors.push(format!(
                    "{at}: text {:?} is not allowed: the content is elements only",
                    t.text().unwrap_or("").trim()
                ));
            }
            self.content(ct, el, at, errors);
        }
        for a in el.attributes() {
            if a.namespace().is_some() {
                continue; // xmlns and xml:* attributes
            }
            match attribute_decls
                .iter()
                .find(|d| d.attribute("name") == Some(a.name()))
            {
                None => errors.push(format!("{at}: attribute {} is not declared", a.name())),
                Some(d) => self.check_simple(
                    d.attribute("type").unwrap_or(""),
                    xs_children(*d).find(|c| xs(*c, "simpleType")),
                    a.value(),
                    &format!("{at} attribute {}", a.name()),
                    errors,
                ),
            }
        }
        for d in &attribute_decls {
            let name = d.attribute("name").unwrap_or_default();
            if d.attribute("use") == Some("required") && el.attribute(name).is_none() {
                errors.push(format!("{at}: required attribute {name} is missing"));
            }
        }
    }

    /// Matches the children of `el` against the content model of `ct` and validates each
    /// child against its declaration (XSD requires one declaration per name in a model).
    fn content(&self, ct: Node<'_, 'static>, el: Node, at: &str, errors: &mut Vec<String>) {
        let children: Vec<Node> = xs_children_of(el).collect();
        let names: Vec<&str> = children.iter().map(|c| c.tag_name().name()).collect();
        let model = xs_children(ct).find(|c| xs(*c, "sequence") || xs(*c, "choice"));
        self.furthest.set(0);
        let ends = match model {
            Some(m) => self.particle(m, &names, 0),
            None => BTreeSet::from([0]),
        };
        if !ends.contains(&names.len()) {
            // The first child no path through the model could consume is the offending one.
            let good = self.furthest.get();
            let expected = model.map_or_else(|| "nothing".to_string(), describe);
            match children.get(good) {
                Some(c) => errors.push(format!(
                    "line {}: <{}> is not expected here in <{}>; the content model is {expected}",
                    c.document().text_pos_at(c.range().start).row,
                    c.tag_name().name(),
                    el.tag_name().name()
                )),
                None => errors.push(format!(
                    "{at}: content ends too early; the content model is {expected}"
                )),
            }
            return;
        }
        let decls: Vec<Node> = model
            .map(|m| m.descendants().filter(|d| xs(*d, "element")).collect())
            .unwrap_or_default();
        for c in children {
            if let Some(d) = decls
                .iter()
                .find(|d| d.attribute("name") == Some(c.tag_name().name()))
            {
                self.element(*d, c, errors);
            }
        }
    }

    /// Every position the particle can end at, starting at `pos`.
    fn particle(&self, p: Node<'_, 'static>, names: &[&str], pos: usize) -> BTreeSet<usize> {
        let min = occurs(p, "minOccurs", 1).unwrap_or(0);
        let max = occurs(p, "maxOccurs", 1);
        let mut reached = BTreeSet::new();
        let mut frontier = BTreeSet::from([pos]);
        let mut seen = BTreeSet::new();
        let mut n = 0u64;
        loop {
            if n >= min {
                reached.extend(frontier.iter().copied());
            }
            if max.is_some_and(|m| n >= m) || frontier.is_empty() {
                break;
            }
            let mut next = BTreeSet::new();
            for &at in &frontier {
                next.extend(self.once(p, names, at));
            }
            n += 1;
            // Unbounded: stop once a round reaches nothing new (past min).
            if n > min {
                next.retain(|e| !seen.contains(e));
            }
            seen.extend(next.iter().copied());
            frontier = next;
        }
        reached
    }

    fn once(&self, p: Node<'_, 'static>, names: &[&str], pos: usize) -> BTreeSet<usize> {
        match p.tag_name().name() {
            "element" => {
                if names.get(pos) == p.attribute("name").as_ref() {
                    self.furthest.set(self.furthest.get().max(pos + 1));
                    BTreeSet::from([pos + 1])
                } else {
                    BTreeSet::new()
                }
            }
            "sequence" => {
                let mut at = BTreeSet::from([pos]);
                for c in xs_children(p) {
                    at = at
                        .iter()
                        .flat_map(|&a| self.particle(c, names, a))
                        .collect();
                }
                at
            }
            "choice" => xs_children(p)
                .flat_map(|c| self.particle(c, names, pos))
                .collect(),
            other => panic!("xs:{other} in a content model is not implemented"),
        }
    }

    /// Checks `value` against a named type or an inline `xs:simpleType`.
    fn check_simple(
        &self,
        type_name: &str,
        inline: Option<Node<'_, 'static>>,
        value: &str,
        what: &str,
        errors: &mut Vec<String>,
    ) {
        if let Err(e) = self.simple(type_name, inline, value) {
            errors.push(format!("{what}: {value:?} {e}"));
        }
    }

    fn simple(
        &self,
        type_name: &str,
        inline: Option<Node<'_, 'static>>,
        value: &str,
    ) -> Result<(), String> {
        let st = match (inline, local(type_name)) {
            (Some(st), _) => st,
            (None, (true, b)) => return builtin(b, value),
            (None, (false, "")) => return Ok(()),
            (None, (false, name)) => self
                .named("simpleType", name)
                .ok_or_else(|| format!("has type {name}, which is not a simple type"))?,
        };
        let r = xs_children(st)
            .find(|c| xs(*c, "restriction"))
            .ok_or("uses a simpleType that is not a restriction")?;
        self.simple(r.attribute("base").unwrap_or("xs:string"), None, value)?;
        let patterns: Vec<&str> = xs_children(r)
            .filter(|c| xs(*c, "pattern"))
            .filter_map(|c| c.attribute("value"))
            .collect();
        if !patterns.is_empty() && !patterns.iter().any(|p| self.patterns[*p].is_match(value)) {
            return Err(format!(
                "does not match the pattern {}",
                patterns.join(" | ")
            ));
        }
        let allowed: Vec<&str> = xs_children(r)
            .filter(|c| xs(*c, "enumeration"))
            .filter_map(|c| c.attribute("value"))
            .collect();
        if !allowed.is_empty() && !allowed.contains(&value.trim()) {
            return Err(format!("is not one of {}", allowed.join(", ")));
        }
        Ok(())
    }
}

fn builtin(name: &str, value: &str) -> Result<(), String> {
    // Integer types collapse whitespace before checking; strings keep it.
    let v = value.trim();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ok = match name {
        "string" => true,
        "integer" => digits(v.strip_prefix(['-', '+']).unwrap_or(v)),
        "nonNegativeInteger" => digits(v.strip_prefix('+').unwrap_or(v)),
        "positiveInteger" => {
            let d = v.strip_prefix('+').unwrap_or(v);
            digits(d) && d.bytes().any(|b| b != b'0')
        }
        "boolean" => matches!(v, "true" | "false" | "0" | "1"),
        other => panic!("xs:{other} is not implemented"),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("is not a valid xs:{name}"))
    }
}

fn xs_children_of<'a, 'i>(el: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    el.children().filter(|c| c.is_element())
}

fn text_of(el: Node) -> String {
    el.children().filter_map(|c| c.text()).collect()
}

/// `(source+, description, ...)`, for messages.
fn describe(p: Node) -> String {
    let suffix = match (p.attribute("minOccurs"), p.attribute("maxOccurs")) {
        (Some("0"), Some("unbounded")) => "*",
        (_, Some("unbounded")) => "+",
        (Some("0"), _) => "?",
        _ => "",
    };
    match p.tag_name().name() {
        "element" => format!("{}{suffix}", p.attribute("name").unwrap_or("?")),
        "sequence" => format!(
            "({}){suffix}",
            xs_children(p).map(describe).collect::<Vec<_>>().join(", ")
        ),
        _ => format!(
            "({}){suffix}",
            xs_children(p).map(describe).collect::<Vec<_>>().join(" | ")
        ),
    }
}
