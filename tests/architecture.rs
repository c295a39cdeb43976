//! The structure of `src/`, checked on the parsed Rust (`syn`), not on lines
//! of text:
//!
//! - **Layers.** Every top-level module has its own rank, read from the
//!   order of the `pub mod` items in `lib.rs` (lowest first). A file may name
//!   only its own module or one of lower rank, through any path form: `use`
//!   trees however they are wrapped or nested, `crate::`/`super::`/`self::`
//!   paths in code, and paths inside macro calls.
//! - **GUI crates.** Only the modules whose comment in `lib.rs` says "GUI
//!   layer" may name wgpu, winit or egui.
//! - **No circles inside a folder.** Within each folder, the files and
//!   sub-folders (rooms) that name each other must form no circle; a path
//!   through a re-export counts as naming the file that defines the item.
//! - **Sizes.** No file over 900 lines and no non-test function over 120
//!   lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::spanned::Spanned;
use syn::visit::Visit;

/// Crates only the GUI layers (and the binary) may use.
const GUI_CRATES: [&str; 5] = ["wgpu", "winit", "egui", "egui_wgpu", "egui_winit"];

/// Most lines a source file may have.
const MAX_FILE_LINES: usize = 900;

/// Most lines a non-test function may span (signature to closing brace).
const MAX_FN_LINES: usize = 120;

/// The layer order and GUI layers declared by `lib.rs`: its `pub mod` items
/// in order, lowest first; a module whose comment above it says "GUI layer"
/// may use the GUI crates.
#[derive(Debug)]
struct Layers {
    order: Vec<String>,
    gui: BTreeSet<String>,
}

impl Layers {
    fn from_lib(source: &str) -> Layers {
        let file = syn::parse_file(source).expect("lib.rs parses");
        let lines: Vec<&str> = source.lines().collect();
        let mut order = Vec::new();
        let mut gui = BTreeSet::new();
        for item in &file.items {
            if let syn::Item::Mod(m) = item {
                let name = m.ident.to_string();
                // The comment lines right above `pub mod NAME;`.
                let at = m.mod_token.span.start().line - 1;
                let comment = lines[..at]
                    .iter()
                    .rev()
                    .take_while(|l| l.trim_start().starts_with("//"))
                    .any(|l| l.contains("GUI layer"));
                if comment {
                    gui.insert(name.clone());
                }
                order.push(name);
            }
        }
        Layers { order, gui }
    }

    fn rank(&self, module: &str) -> Option<usize> {
        self.order.iter().position(|m| m == module)
    }
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        (a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().split_whitespace().any(|t| t == "test")))
            || a.path().is_ident("test")
    })
}

/// One source file: its module path (`["terrain", "storage", "grid"]`), the
/// folder it lies in and whether it is a `mod.rs` (the folder's own module).
#[derive(Clone, Debug)]
struct SourceFile {
    relative: PathBuf,
    module: Vec<String>,
    source: String,
}

/// A path one file names, as written, with the module it is written in.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Named {
    line: usize,
    /// The module the code sits in (inline modules included).
    scope: Vec<String>,
    /// The path as written: `crate::x`, `super::x`, `self::x`, a child
    /// module's name, or another crate's name.
    segments: Vec<String>,
}

/// Collects every path a file names, resolving `crate::`, `super::` and
/// `self::` against the module the code sits in (inline modules included).
struct PathCollector<'a> {
    /// The module path of the code being visited (grows inside inline `mod`s).
    scope: Vec<String>,
    test_depth: usize,
    found: Vec<Named>,
    _file: &'a str,
    fn_lengths: Vec<(String, usize, usize)>,
}

impl PathCollector<'_> {
    fn push(&mut self, line: usize, segments: Vec<String>) {
        if segments.is_empty() {
            return;
        }
        self.found.push(Named {
            line,
            scope: self.scope.clone(),
            segments,
        });
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix.clone();
                if n.ident != "self" {
                    full.push(n.ident.to_string());
                }
                self.push(n.ident.span().start().line, full);
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                if r.ident != "self" {
                    full.push(r.ident.to_string());
                }
                self.push(r.ident.span().start().line, full);
            }
            syn::UseTree::Glob(g) => {
                let line = g.star_token.span().start().line;
                self.push(line, prefix.clone());
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    /// Paths inside a macro call's tokens (`assert!(crate::x::f())`), which
    /// `syn` leaves unparsed: every run of `ident :: ident ...`.
    fn macro_tokens(&mut self, tokens: proc_macro2::TokenStream) {
        let flat = flatten(tokens);
        let mut i = 0;
        while i < flat.len() {
            if let Tok::Ident(ref first, line) = flat[i] {
                let before_is_sep = i >= 2 && matches!(flat[i - 1], Tok::Colon2);
                if !before_is_sep {
                    let mut segs = vec![first.clone()];
                    let mut j = i + 1;
                    while j + 1 < flat.len() {
                        match (&flat[j], &flat[j + 1]) {
                            (Tok::Colon2, Tok::Ident(s, _)) => {
                                segs.push(s.clone());
                                j += 2;
                            }
                            _ => break,
                        }
                    }
                    if segs.len() > 1 {
                        self.push(line, segs);
                    }
                    i = j;
                    continue;
                }
            }
            i += 1;
        }
    }
}

#[derive(Clone, Debug)]
enum Tok {
    Ident(String, usize),
    Colon2,
    Other,
}

fn flatten(tokens: proc_macro2::TokenStream) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut pending_colon = false;
    for tt in tokens {
        match tt {
            proc_macro2::TokenTree::Ident(id) => {
                pending_colon = false;
                out.push(Tok::Ident(id.to_string(), id.span().start().line));
            }
            proc_macro2::TokenTree::Punct(p) => {
                if p.as_char() == ':' && p.spacing() == proc_macro2::Spacing::Joint {
                    pending_colon = true;
                } else if p.as_char() == ':' && pending_colon {
                    pending_colon = false;
                    out.push(Tok::Colon2);
                } else {
                    pending_colon = false;
                    out.push(Tok::Other);
                }
            }
            proc_macro2::TokenTree::Group(g) => {
                pending_colon = false;
                out.push(Tok::Other);
                out.extend(flatten(g.stream()));
                out.push(Tok::Other);
            }
            proc_macro2::TokenTree::Literal(_) => {
                pending_colon = false;
                out.push(Tok::Other);
            }
        }
    }
    out
}

impl<'ast> Visit<'ast> for PathCollector<'_> {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let test = is_cfg_test(&u.attrs);
        self.test_depth += usize::from(test);
        let mut prefix = Vec::new();
        if u.leading_colon.is_some() {
            prefix.push(String::new());
        }
        self.use_tree(&mut prefix, &u.tree);
        self.test_depth -= usize::from(test);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if p.leading_colon.is_none() && !segs.is_empty() {
            self.push(p.span().start().line, segs);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {
        // `pub(crate)`, `pub(super)`: not a path to anything.
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.macro_tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let test = is_cfg_test(&m.attrs);
        self.test_depth += usize::from(test);
        self.scope.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.scope.pop();
        self.test_depth -= usize::from(test);
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let test = is_cfg_test(&f.attrs);
        self.test_depth += usize::from(test);
        if self.test_depth == 0 {
            let lines = f.span().end().line + 1 - f.sig.fn_token.span.start().line;
            self.fn_lengths.push((
                f.sig.ident.to_string(),
                f.sig.fn_token.span.start().line,
                lines,
            ));
        }
        syn::visit::visit_item_fn(self, f);
        self.test_depth -= usize::from(test);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let test = is_cfg_test(&f.attrs);
        self.test_depth += usize::from(test);
        if self.test_depth == 0 {
            let lines = f.block.span().end().line + 1 - f.sig.fn_token.span.start().line;
            self.fn_lengths.push((
                f.sig.ident.to_string(),
                f.sig.fn_token.span.start().line,
                lines,
            ));
        }
        syn::visit::visit_impl_item_fn(self, f);
        self.test_depth -= usize::from(test);
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let test = is_cfg_test(&i.attrs);
        self.test_depth += usize::from(test);
        syn::visit::visit_item_impl(self, i);
        self.test_depth -= usize::from(test);
    }
}

/// Where a written path leads.
enum Target {
    /// A module path of this crate (`[]` is the crate root).
    Crate(Vec<String>),
    /// `super::` past the crate root.
    AboveRoot,
    /// Another crate, by name (or a local name that is no module).
    Extern(String),
}

/// What one file names, and its function lengths.
struct Parsed {
    named: Vec<Named>,
    fn_lengths: Vec<(String, usize, usize)>,
    /// `use` re-exports (any visibility but private) at file level:
    /// `alias -> path as written`, resolved from the file's module.
    reexports: BTreeMap<String, Vec<String>>,
}

fn parse(file: &SourceFile) -> Result<Parsed, String> {
    let ast = syn::parse_file(&file.source)
        .map_err(|e| format!("{}: does not parse: {e}", file.relative.display()))?;
    let mut collector = PathCollector {
        scope: file.module.clone(),
        test_depth: 0,
        found: Vec::new(),
        _file: &file.source,
        fn_lengths: Vec::new(),
    };
    collector.visit_file(&ast);
    let mut reexports = BTreeMap::new();
    for item in &ast.items {
        if let syn::Item::Use(u) = item
            && !matches!(u.vis, syn::Visibility::Inherited)
        {
            let mut names = Vec::new();
            leaf_names(&mut Vec::new(), &u.tree, &mut names);
            reexports.extend(names);
        }
    }
    Ok(Parsed {
        named: collector.found,
        fn_lengths: collector.fn_lengths,
        reexports,
    })
}

fn leaf_names(prefix: &mut Vec<String>, tree: &syn::UseTree, out: &mut Vec<(String, Vec<String>)>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            leaf_names(prefix, &p.tree, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut full = prefix.clone();
            full.push(n.ident.to_string());
            out.push((n.ident.to_string(), full));
        }
        syn::UseTree::Rename(r) => {
            let mut full = prefix.clone();
            full.push(r.ident.to_string());
            out.push((r.rename.to_string(), full));
        }
        syn::UseTree::Glob(_) => {}
        syn::UseTree::Group(g) => {
            for t in &g.items {
                leaf_names(prefix, t, out);
            }
        }
    }
}

/// The checked tree: every file, parsed, with its module path.
struct Tree {
    layers: Layers,
    files: Vec<SourceFile>,
    parsed: Vec<Parsed>,
    /// Module path → index into `files`.
    modules: BTreeMap<Vec<String>, usize>,
}

impl Tree {
    /// `sources`: `(path relative to src/, text)`; must include `lib.rs`.
    fn new(sources: Vec<(PathBuf, String)>) -> Result<Tree, Vec<String>> {
        let lib = sources
            .iter()
            .find(|(p, _)| p == Path::new("lib.rs"))
            .map(|(_, s)| s.clone())
            .ok_or_else(|| vec!["no lib.rs".to_string()])?;
        let layers = Layers::from_lib(&lib);
        let mut files = Vec::new();
        for (relative, source) in sources {
            let mut module: Vec<String> = relative
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module
                .last()
                .is_some_and(|m| m == "mod" || m == "lib" || m == "main")
            {
                module.pop();
            }
            files.push(SourceFile {
                relative,
                module,
                source,
            });
        }
        let mut errors = Vec::new();
        let mut parsed = Vec::new();
        for f in &files {
            match parse(f) {
                Ok(p) => parsed.push(p),
                Err(e) => {
                    errors.push(e);
                    parsed.push(Parsed {
                        named: Vec::new(),
                        fn_lengths: Vec::new(),
                        reexports: BTreeMap::new(),
                    });
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let modules = files
            .iter()
            .enumerate()
            .filter(|(_, f)| f.relative != Path::new("main.rs"))
            .map(|(i, f)| (f.module.clone(), i))
            .collect();
        Ok(Tree {
            layers,
            files,
            parsed,
            modules,
        })
    }

    /// Where a path written in module `scope` leads.
    fn target(&self, scope: &[String], segments: &[String]) -> Target {
        let Some(first) = segments.first() else {
            return Target::Crate(Vec::new());
        };
        match first.as_str() {
            "crate" => Target::Crate(segments[1..].to_vec()),
            "self" => Target::Crate([scope, &segments[1..]].concat()),
            "super" => {
                let mut p = scope.to_vec();
                let mut rest = segments;
                while rest.first().is_some_and(|s| s == "super") {
                    if p.pop().is_none() {
                        return Target::AboveRoot;
                    }
                    rest = &rest[1..];
                }
                Target::Crate([&p[..], rest].concat())
            }
            // A child module of the current one (`use storage::grid;` in a
            // mod.rs), or another crate.
            name => {
                let child = [scope, &[name.to_string()]].concat();
                if self.modules.contains_key(&child) {
                    Target::Crate([scope, segments].concat())
                } else {
                    Target::Extern(name.to_string())
                }
            }
        }
    }

    /// The file a crate path names: the deepest module file along it, with
    /// re-exports of that module followed to the file that defines the item.
    fn resolve(&self, path: &[String], depth: usize) -> Option<usize> {
        let (i, n) = (0..=path.len())
            .rev()
            .find_map(|n| self.modules.get(&path[..n]).map(|&i| (i, n)))?;
        if depth < 8
            && let Some(next) = path.get(n)
            && let Some(written) = self.parsed[i].reexports.get(next)
            && let Target::Crate(mut redirected) = self.target(&self.files[i].module, written)
        {
            redirected.extend_from_slice(&path[n + 1..]);
            if let Some(j) = self.resolve(&redirected, depth + 1) {
                return Some(j);
            }
        }
        Some(i)
    }

    fn layering_violations(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (f, p) in self.files.iter().zip(&self.parsed) {
            let Some(own_module) = f.module.first() else {
                continue; // lib.rs and main.rs sit above everything.
            };
            let Some(own) = self.layers.rank(own_module) else {
                out.push(format!(
                    "{}: module `{own_module}` is not a `pub mod` of lib.rs",
                    f.relative.display()
                ));
                continue;
            };
            let gui_ok = self.layers.gui.contains(own_module);
            for named in &p.named {
                let where_ = format!("{}:{}", f.relative.display(), named.line);
                let path = match self.target(&named.scope, &named.segments) {
                    Target::Extern(krate) => {
                        if !gui_ok && GUI_CRATES.contains(&krate.as_str()) {
                            out.push(format!(
                                "{where_}: `{own_module}` uses `{krate}`; only the GUI layers may"
                            ));
                        }
                        continue;
                    }
                    Target::AboveRoot => {
                        out.push(format!(
                            "{where_}: a `super::` path climbs above the crate root"
                        ));
                        continue;
                    }
                    Target::Crate(path) => path,
                };
                let Some(target) = path.first() else {
                    continue; // `crate` itself
                };
                match self.layers.rank(target) {
                    Some(r) if r > own => out.push(format!(
                        "{where_}: `{own_module}` (rank {own}) names `crate::{}` (rank {r}), \
                         which lies above it",
                        path.join("::")
                    )),
                    Some(_) => {}
                    None => out.push(format!(
                        "{where_}: `crate::{}` is not a known module",
                        path.join("::")
                    )),
                }
            }
        }
        out
    }

    /// Circles among the children (files and sub-folders) of every folder.
    fn circles(&self) -> Vec<String> {
        // For each folder (a module path that has a mod.rs or is the crate
        // root), its children are the next path segment of every file below.
        type Edges = BTreeMap<(String, String), String>;
        let mut edges: BTreeMap<Vec<String>, Edges> = BTreeMap::new();
        for (i, (f, p)) in self.files.iter().zip(&self.parsed).enumerate() {
            if f.relative == Path::new("main.rs") {
                continue;
            }
            for named in &p.named {
                let Target::Crate(path) = self.target(&named.scope, &named.segments) else {
                    continue;
                };
                let Some(j) = self.resolve(&path, 0) else {
                    continue;
                };
                if i == j {
                    continue;
                }
                let a = &f.module;
                let b = &self.files[j].module;
                // The deepest folder holding both as distinct children.
                let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
                if common >= a.len() || common >= b.len() {
                    continue; // one is the other's folder (mod.rs wiring)
                }
                edges
                    .entry(a[..common].to_vec())
                    .or_default()
                    .entry((a[common].clone(), b[common].clone()))
                    .or_insert_with(|| format!("{}:{}", f.relative.display(), named.line));
            }
        }
        let mut out = Vec::new();
        for (folder, es) in edges {
            let pairs: BTreeSet<(String, String)> = es.keys().cloned().collect();
            for cycle in cycles_of(&pairs) {
                let folder = if folder.is_empty() {
                    "src".to_string()
                } else {
                    format!("src/{}", folder.join("/"))
                };
                let members: BTreeSet<&String> = cycle.iter().collect();
                let witnesses: Vec<String> = es
                    .iter()
                    .filter(|((a, b), _)| members.contains(a) && members.contains(b))
                    .map(|((a, b), at)| format!("    {a} -> {b} ({at})"))
                    .collect();
                out.push(format!(
                    "{folder}: circle {}\n{}",
                    cycle.join(" -> "),
                    witnesses.join("\n")
                ));
            }
        }
        out
    }

    fn size_violations(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (f, p) in self.files.iter().zip(&self.parsed) {
            let lines = f.source.lines().count();
            if lines > MAX_FILE_LINES {
                out.push(format!(
                    "{}: {lines} lines (at most {MAX_FILE_LINES})",
                    f.relative.display()
                ));
            }
            for (name, line, len) in &p.fn_lengths {
                if *len > MAX_FN_LINES {
                    out.push(format!(
                        "{}:{line}: fn {name} spans {len} lines (at most {MAX_FN_LINES})",
                        f.relative.display()
                    ));
                }
            }
        }
        out
    }
}

/// The strongly connected components of more than one node, each as a
/// closed walk (`a -> b -> a`).
fn cycles_of(edges: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.iter().flat_map(|(a, b)| [a, b]).collect();
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for (a, b) in edges {
                if *a == n && seen.insert(b.clone()) {
                    stack.push(b.clone());
                }
            }
        }
        seen
    };
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for n in nodes {
        if done.contains(n) {
            continue;
        }
        let from_n = reach(n);
        if !from_n.contains(n) {
            continue;
        }
        let component: Vec<String> = from_n
            .iter()
            .filter(|m| reach(m).contains(n))
            .cloned()
            .collect();
        done.extend(component.iter().cloned());
        let mut walk = component.clone();
        walk.push(component[0].clone());
        out.push(walk);
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn real_tree() -> Tree {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(files.len() > 50, "found only {} source files", files.len());
    let sources = files
        .iter()
        .map(|p| {
            (
                p.strip_prefix(&src).expect("under src").to_path_buf(),
                std::fs::read_to_string(p).expect("readable source"),
            )
        })
        .collect();
    Tree::new(sources).unwrap_or_else(|e| panic!("{}", e.join("\n")))
}

fn report(kind: &str, all: Vec<String>) {
    assert!(all.is_empty(), "{} {kind}:\n{}", all.len(), all.join("\n"));
}

#[test]
fn no_file_names_a_higher_layer() {
    let tree = real_tree();
    assert!(
        tree.layers.order.len() >= 10,
        "lib.rs layers: {:?}",
        tree.layers.order
    );
    report("layering violations", tree.layering_violations());
}

#[test]
fn no_folder_holds_a_circle() {
    report("circles", real_tree().circles());
}

#[test]
fn no_file_or_function_is_too_long() {
    report("size violations", real_tree().size_violations());
}

/// A small tree: lib.rs with three layers and the given files.
fn toy(files: &[(&str, &str)]) -> Tree {
    let lib = "// Lowest.\npub mod terrain;\n\n// Middle.\npub mod mesh;\n\n// GUI layer.\npub mod render;\n";
    let mut sources = vec![(PathBuf::from("lib.rs"), lib.to_string())];
    sources.push((
        PathBuf::from("terrain/mod.rs"),
        "pub mod a;\npub mod b;\npub mod grid;\npub mod room;\n".to_string(),
    ));
    sources.push((
        PathBuf::from("terrain/room/mod.rs"),
        "pub mod c;\n".to_string(),
    ));
    sources.push((PathBuf::from("mesh/mod.rs"), String::new()));
    sources.push((
        PathBuf::from("render/mod.rs"),
        "pub struct Gpu;".to_string(),
    ));
    for (p, s) in files {
        sources.retain(|(q, _)| q != Path::new(p));
        sources.push((PathBuf::from(p), s.to_string()));
    }
    Tree::new(sources).expect("toy tree parses")
}

#[test]
fn the_checker_catches_upward_paths_in_every_form() {
    let up = |code: &str| {
        toy(&[("terrain/grid.rs", code)])
            .layering_violations()
            .len()
    };
    assert_eq!(up("use crate::terrain::a::X;\nuse super::b;"), 0);
    assert_eq!(up("use crate::render::Gpu;"), 1);
    // rustfmt's wrapped group, and a nested group after the first `}`.
    assert_eq!(up("use crate::{\n    render::Gpu,\n};"), 1);
    assert_eq!(up("use crate::{terrain::{a::X, b::Y}, render::Gpu};"), 1);
    assert_eq!(up("use crate::{mesh::{self}, terrain::a};"), 1);
    assert_eq!(up("use crate::{terrain::{self, a::{X, Y}}};"), 0);
    // `super::super::` climbing out of terrain/grid.rs reaches the crate root.
    assert_eq!(up("use super::super::render::Gpu;"), 1);
    assert_eq!(up("fn f() { super::super::render::draw(); }"), 1);
    // Paths in code, in types and inside macro calls.
    assert_eq!(up("fn f() { crate::render::draw(); }"), 1);
    assert_eq!(up("fn f(_: &crate::render::Gpu) {}"), 1);
    assert_eq!(up("fn f() { assert!(crate::render::ok()); }"), 1);
    // Comments and doc links are not paths.
    assert_eq!(
        up("/// See [`crate::render::Gpu`].\n// crate::render\nfn f() {}"),
        0
    );
    // GUI crates stay in the GUI layers.
    assert_eq!(up("fn f(_: wgpu::Device) {}"), 1);
    assert_eq!(up("use egui::Context;"), 1);
    let render = toy(&[("render/x.rs", "fn f(_: wgpu::Device) {}")]);
    assert!(render.layering_violations().is_empty());
    // Inside a test module, `super::` is the file's own module.
    assert_eq!(up("#[cfg(test)]\nmod tests { use super::super::a::X; }"), 0);
    // A module with no layer is reported.
    assert_eq!(toy(&[("gizmo/x.rs", "")]).layering_violations().len(), 1);
}

#[test]
fn the_checker_catches_circles_inside_a_folder() {
    // a.rs and b.rs name each other: a circle inside terrain/.
    let two = toy(&[
        ("terrain/a.rs", "use super::b::Y; pub struct X;"),
        (
            "terrain/b.rs",
            "pub struct Y; fn f() -> crate::terrain::a::X { todo!() }",
        ),
    ]);
    let c = two.circles();
    assert_eq!(c.len(), 1, "{c:?}");
    assert!(c[0].starts_with("src/terrain: circle a -> b -> a"), "{c:?}");
    // One direction only: no circle.
    let one = toy(&[
        ("terrain/a.rs", "use super::b::Y;"),
        ("terrain/b.rs", "pub struct Y;"),
    ]);
    assert!(one.circles().is_empty());
    // A room (sub-folder) and a file naming each other, through a re-export.
    let rooms = toy(&[
        (
            "terrain/mod.rs",
            "pub mod a;\npub mod room;\npub use room::c::Z;\n",
        ),
        (
            "terrain/a.rs",
            "pub struct X; fn f(_: crate::terrain::Z) {}",
        ),
        (
            "terrain/room/c.rs",
            "pub struct Z; fn f(_: crate::terrain::a::X) {}",
        ),
    ]);
    let c = rooms.circles();
    assert_eq!(
        c,
        vec![
            "src/terrain: circle a -> room -> a\n    a -> room (terrain/a.rs:1)\n    \
             room -> a (terrain/room/c.rs:1)"
                .to_string()
        ]
    );
}

#[test]
fn the_checker_measures_files_and_functions() {
    let long_fn = format!("fn f() {{\n{}}}\n", "    let _x = 1;\n".repeat(130));
    let tree = toy(&[("terrain/a.rs", &long_fn)]);
    let v = tree.size_violations();
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].contains("fn f spans 132 lines"), "{v:?}");
    // Test functions may be long.
    let test_fn = format!("#[cfg(test)]\nmod tests {{\n{long_fn}}}\n");
    assert!(
        toy(&[("terrain/a.rs", &test_fn)])
            .size_violations()
            .is_empty()
    );
    let long_file = "// x\n".repeat(901);
    assert_eq!(
        toy(&[("terrain/a.rs", &long_file)]).size_violations().len(),
        1
    );
}
