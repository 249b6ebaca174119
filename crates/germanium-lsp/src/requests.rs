//! Answers to the editor's requests, from a document's current outline and its last
//! finished (or running) verification: hover, code lenses, document symbols, definitions.

use std::collections::HashMap;

use lsp_server::{ErrorCode, Request, Response};
use lsp_types::request::{
    CodeLensRequest, DocumentSymbolRequest, GotoDefinition, HoverRequest, Request as _,
};
use lsp_types::{
    CodeLens, Command, DocumentSymbol, DocumentSymbolResponse, GotoDefinitionResponse, Hover,
    HoverContents, Location, MarkupContent, MarkupKind, Position, Range, SymbolKind, Url,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::line_index::LineIndex;
use crate::outline::{Declaration, Kind, Outline};
use crate::server::Document;

pub fn answer(documents: &mut HashMap<Url, Document>, request: Request) -> Response {
    let id = request.id.clone();
    match request.method.as_str() {
        HoverRequest::METHOD => respond(request, |p: lsp_types::HoverParams| {
            let at = p.text_document_position_params;
            hover(documents.get_mut(&at.text_document.uri)?, at.position)
        }),
        CodeLensRequest::METHOD => respond(request, |p: lsp_types::CodeLensParams| {
            Some(code_lenses(documents.get_mut(&p.text_document.uri)?))
        }),
        DocumentSymbolRequest::METHOD => respond(request, |p: lsp_types::DocumentSymbolParams| {
            let document = documents.get_mut(&p.text_document.uri)?;
            Some(DocumentSymbolResponse::Nested(symbols(document.outline())))
        }),
        GotoDefinition::METHOD => respond(request, |p: lsp_types::GotoDefinitionParams| {
            let at = p.text_document_position_params;
            let document = documents.get_mut(&at.text_document.uri)?;
            let offset = LineIndex::new(&document.text).offset(at.position);
            let uri = at.text_document.uri.clone();
            definition(document.outline(), offset, &uri).map(GotoDefinitionResponse::Scalar)
        }),
        _ => Response::new_err(
            id,
            ErrorCode::MethodNotFound as i32,
            format!("germanium does not answer `{}`", request.method),
        ),
    }
}

/// Decodes the parameters and encodes the answer (`null` when there is none).
fn respond<P: DeserializeOwned, R: Serialize>(
    request: Request,
    handle: impl FnOnce(P) -> Option<R>,
) -> Response {
    match serde_json::from_value::<P>(request.params) {
        Ok(params) => Response::new_ok(request.id, handle(params)),
        Err(e) => Response::new_err(
            request.id,
            ErrorCode::InvalidParams as i32,
            format!("invalid parameters for `{}`: {e}", request.method),
        ),
    }
}

fn contains(range: &Range, position: Position) -> bool {
    range.start <= position && position <= range.end
}

/// Over an error of the last run: its id, message and counterexample. Over a member's name:
/// its last result.
fn hover(document: &mut Document, position: Position) -> Option<Hover> {
    let markdown = |value: String, range| Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range: Some(range),
    };
    if let Some(verified) = &document.verified {
        let errors: Vec<&(Range, String)> = verified
            .hovers
            .iter()
            .filter(|(range, _)| contains(range, position))
            .collect();
        if let Some((range, _)) = errors.first() {
            let text: Vec<&str> = errors.iter().map(|(_, t)| t.as_str()).collect();
            return Some(markdown(text.join("\n\n---\n\n"), *range));
        }
    }
    let (name, kind, range) = member_at(document, position)?;
    let result = member_title(document, &name)?;
    Some(markdown(
        format!("{} `{name}`: {result}", kind.word()),
        range,
    ))
}

/// The document's members (methods, functions, predicates) and the ranges of their names.
fn members(document: &mut Document) -> Vec<(String, Kind, Range)> {
    let outline = document.outline();
    let index = LineIndex::new(&outline.sources.get(outline.main).text);
    outline
        .own()
        .filter(|d| d.kind.is_member())
        .map(|d| {
            let range = index.range(d.name_span.start as usize, d.name_span.end as usize);
            (d.name.clone(), d.kind, range)
        })
        .collect()
}

/// The member whose name is at `position`.
fn member_at(document: &mut Document, position: Position) -> Option<(String, Kind, Range)> {
    members(document)
        .into_iter()
        .find(|(_, _, range)| contains(range, position))
}

/// A member's result in the last run, or that it is being verified.
fn member_title(document: &Document, name: &str) -> Option<String> {
    let running = document.running.as_ref();
    if let Some(result) = running.and_then(|r| r.members.get(name)) {
        return Some(result.title());
    }
    if running.is_some() {
        return Some("verifying…".into());
    }
    let result = document.verified.as_ref()?.members.get(name)?;
    Some(result.title())
}

/// One lens per member, above its name: its result and time.
fn code_lenses(document: &mut Document) -> Vec<CodeLens> {
    members(document)
        .into_iter()
        .filter_map(|(name, _, range)| {
            let title = member_title(document, &name)?;
            Some(CodeLens {
                range,
                // Only a label: the command runs nothing.
                command: Some(Command {
                    title,
                    command: String::new(),
                    arguments: None,
                }),
                data: None,
            })
        })
        .collect()
}

fn symbol_kind(kind: Kind) -> SymbolKind {
    match kind {
        Kind::Field => SymbolKind::FIELD,
        Kind::Method => SymbolKind::METHOD,
        Kind::Function | Kind::DomainFunction => SymbolKind::FUNCTION,
        Kind::Predicate => SymbolKind::INTERFACE,
        Kind::Domain => SymbolKind::CLASS,
        Kind::Axiom => SymbolKind::PROPERTY,
        Kind::Adt => SymbolKind::ENUM,
        Kind::Constructor => SymbolKind::ENUM_MEMBER,
        Kind::Destructor => SymbolKind::FIELD,
        Kind::Macro => SymbolKind::CONSTANT,
        Kind::Variable => SymbolKind::VARIABLE,
    }
}

/// The document's declarations as a tree (a member's parameters and results are not listed).
fn symbols(outline: &Outline) -> Vec<DocumentSymbol> {
    let index = LineIndex::new(&outline.sources.get(outline.main).text);
    fn symbol(d: &Declaration, index: &LineIndex) -> DocumentSymbol {
        let children: Vec<DocumentSymbol> = d
            .children
            .iter()
            .filter(|c| c.kind != Kind::Variable)
            .map(|c| symbol(c, index))
            .collect();
        #[allow(deprecated)] // `deprecated` is a required field of the type
        DocumentSymbol {
            name: d.name.clone(),
            detail: Some(d.kind.word().to_string()),
            kind: symbol_kind(d.kind),
            tags: None,
            deprecated: None,
            range: index.range(d.span.start as usize, d.span.end as usize),
            selection_range: index.range(d.name_span.start as usize, d.name_span.end as usize),
            children: (!children.is_empty()).then_some(children),
        }
    }
    outline.own().map(|d| symbol(d, &index)).collect()
}

/// Where the name at `offset` is declared (in the document or a file it imports).
fn definition(outline: &Outline, offset: usize, document: &Url) -> Option<Location> {
    let d = outline.definition_at(offset)?;
    let (path, text) = outline.file_of(d);
    let uri = if d.name_span.file == outline.main {
        document.clone()
    } else {
        Url::from_file_path(path).ok()?
    };
    let index = LineIndex::new(text);
    Some(Location {
        uri,
        range: index.range(d.name_span.start as usize, d.name_span.end as usize),
    })
}
