//! `regraft lsp`: a language server for rule files (`*.yaml`/`*.yml` that hold regraft rules,
//! and `*.graft`), over stdio. Diagnostics are `lint` on the unsaved text; hover shows the rule
//! reference for keys and actions and where a metavariable is bound; completion offers the
//! keys valid at the cursor, action names and the metavariables bound so far; go to definition
//! leads from `signature: Class.method` to the callee in the project's targets.
//!
//! Built on `lsp-server` and `lsp-types` (rust-analyzer's): a synchronous loop over stdio with
//! no async runtime, which is all a server answering from in-memory text needs.

mod features;
mod lens;
mod reference;
mod text;
mod transport;

use std::collections::HashMap;

use lsp_server::{Connection, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, Notification as _,
    PublishDiagnostics,
};
use lsp_types::request::{
    CodeLensRequest, Completion, ExecuteCommand, GotoDefinition, HoverRequest, Request as _,
};
use lsp_types::{
    CodeLensOptions, CompletionOptions, ExecuteCommandOptions, HoverProviderCapability, OneOf,
    PublishDiagnosticsParams, ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind,
    Uri,
};

/// Why the server stopped other than by `shutdown`/`exit`.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("language server: {0}")]
#[diagnostic(code(regraft::lsp))]
pub struct LspError(String);

/// Serves the Language Server Protocol on stdin/stdout until the client says `exit`.
pub fn serve() -> Result<(), LspError> {
    let (connection, io) = transport::stdio();
    let capabilities = ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["$".into(), ":".into()]),
            ..CompletionOptions::default()
        }),
        definition_provider: Some(OneOf::Left(true)),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(false),
        }),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: vec![lens::SHOW_DIFF.into()],
            ..ExecuteCommandOptions::default()
        }),
        ..ServerCapabilities::default()
    };
    let caps = serde_json::to_value(capabilities).map_err(|e| LspError(e.to_string()))?;
    connection
        .initialize(caps)
        .map_err(|e| LspError(e.to_string()))?;
    let mut server = Server::default();
    for message in &connection.receiver {
        match message {
            Message::Request(request) => {
                if connection
                    .handle_shutdown(&request)
                    .map_err(|e| LspError(e.to_string()))?
                {
                    break;
                }
                let response = server.request(request);
                send(&connection, Message::Response(response))?;
            }
            Message::Notification(note) => {
                // The protocol: `exit` before `shutdown` ends the server with exit code 1.
                if note.method == "exit" {
                    drop(connection);
                    return Err(LspError("`exit` came before `shutdown`".into()));
                }
                for out in server.notify(note) {
                    send(&connection, Message::Notification(out))?;
                }
            }
            Message::Response(_) => {}
        }
    }
    drop(connection);
    io.join().map_err(|e| LspError(e.to_string()))
}

fn send(connection: &Connection, message: Message) -> Result<(), LspError> {
    connection
        .sender
        .send(message)
        .map_err(|e| LspError(e.to_string()))
}

/// The open documents, by URI.
#[derive(Default)]
struct Server {
    documents: HashMap<Uri, String>,
}

impl Server {
    /// The notifications a client notification calls for (diagnostics of a changed document).
    fn notify(&mut self, note: Notification) -> Vec<Notification> {
        let uri = match note.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidOpenTextDocumentParams>(note.params)
                else {
                    return Vec::new();
                };
                self.documents
                    .insert(p.text_document.uri.clone(), p.text_document.text);
                p.text_document.uri
            }
            DidChangeTextDocument::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidChangeTextDocumentParams>(note.params)
                else {
                    return Vec::new();
                };
                // Full sync: the last change holds the whole text.
                let Some(change) = p.content_changes.into_iter().last() else {
                    return Vec::new();
                };
                self.documents
                    .insert(p.text_document.uri.clone(), change.text);
                p.text_document.uri
            }
            DidCloseTextDocument::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidCloseTextDocumentParams>(note.params)
                else {
                    return Vec::new();
                };
                self.documents.remove(&p.text_document.uri);
                // Closed: its diagnostics go with it.
                return vec![publish(p.text_document.uri, Vec::new())];
            }
            _ => return Vec::new(),
        };
        let text = self.documents.get(&uri).map_or("", String::as_str);
        vec![publish(uri.clone(), features::diagnostics(&uri, text))]
    }

    /// The answer to a request; an unknown method gets `MethodNotFound`.
    fn request(&mut self, request: Request) -> Response {
        let id = request.id.clone();
        let result = match request.method.as_str() {
            HoverRequest::METHOD => {
                self.params::<lsp_types::HoverParams>(request)
                    .map(|(p, text)| {
                        let at = &p.text_document_position_params;
                        serde_json::to_value(features::hover(
                            &at.text_document.uri,
                            &text,
                            at.position,
                        ))
                    })
            }
            Completion::METHOD => {
                self.params::<lsp_types::CompletionParams>(request)
                    .map(|(p, text)| {
                        serde_json::to_value(features::completion(
                            &text,
                            p.text_document_position.position,
                        ))
                    })
            }
            GotoDefinition::METHOD => {
                self.params::<lsp_types::GotoDefinitionParams>(request)
                    .map(|(p, text)| {
                        let at = &p.text_document_position_params;
                        serde_json::to_value(features::definition(
                            &at.text_document.uri,
                            &text,
                            at.position,
                        ))
                    })
            }
            CodeLensRequest::METHOD => {
                self.params::<lsp_types::CodeLensParams>(request)
                    .map(|(p, text)| {
                        let uri = &p.text_document.uri;
                        let lenses = features::syntax(uri, &text)
                            .map(|syntax| lens::lenses(uri, &text, syntax))
                            .unwrap_or_default();
                        serde_json::to_value(lenses)
                    })
            }
            ExecuteCommand::METHOD => self.show_diff(request),
            _ => {
                return Response::new_err(
                    id,
                    lsp_server::ErrorCode::MethodNotFound as i32,
                    format!("regraft lsp does not answer {}", request.method),
                );
            }
        };
        match result {
            Some(Ok(value)) => Response::new_ok(id, value),
            Some(Err(e)) => Response::new_err(
                id,
                lsp_server::ErrorCode::InternalError as i32,
                e.to_string(),
            ),
            None => Response::new_ok(id, serde_json::Value::Null),
        }
    }

    /// `regraft.showDiff URI ID`: the diff of that rule alone over the configured targets, as
    /// the command's result (a string).
    fn show_diff(&self, request: Request) -> Option<Result<serde_json::Value, serde_json::Error>> {
        let params: lsp_types::ExecuteCommandParams =
            serde_json::from_value(request.params).ok()?;
        if params.command != lens::SHOW_DIFF {
            return None;
        }
        let [uri, id] = params.arguments.as_slice() else {
            return None;
        };
        let uri: Uri = uri.as_str()?.parse().ok()?;
        let text = self.documents.get(&uri)?;
        let syntax = features::syntax(&uri, text)?;
        let diff = lens::diff(&uri, text, syntax, id.as_str()?)?;
        Some(Ok(serde_json::Value::String(diff)))
    }

    /// A request's parameters and the text of the document they name, if it is open.
    fn params<P>(&self, request: Request) -> Option<(P, String)>
    where
        P: serde::de::DeserializeOwned + HasDocument,
    {
        let params: P = serde_json::from_value(request.params).ok()?;
        let text = self.documents.get(params.document())?.clone();
        Some((params, text))
    }
}

/// Request parameters that name a document.
trait HasDocument {
    fn document(&self) -> &Uri;
}

impl HasDocument for lsp_types::HoverParams {
    fn document(&self) -> &Uri {
        &self.text_document_position_params.text_document.uri
    }
}

impl HasDocument for lsp_types::CompletionParams {
    fn document(&self) -> &Uri {
        &self.text_document_position.text_document.uri
    }
}

impl HasDocument for lsp_types::CodeLensParams {
    fn document(&self) -> &Uri {
        &self.text_document.uri
    }
}

impl HasDocument for lsp_types::GotoDefinitionParams {
    fn document(&self) -> &Uri {
        &self.text_document_position_params.text_document.uri
    }
}

fn publish(uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>) -> Notification {
    Notification::new(
        PublishDiagnostics::METHOD.to_string(),
        PublishDiagnosticsParams {
            uri,
            diagnostics,
            version: None,
        },
    )
}
