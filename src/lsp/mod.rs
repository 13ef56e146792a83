//! `regraft lsp`: a language server for rule files (`*.yaml`/`*.yml` that hold regraft rules,
//! and `*.graft`), over stdio. Diagnostics are `lint` on the unsaved text; hover shows the rule
//! reference for keys and actions and where a metavariable is bound; completion offers the
//! keys valid at the cursor, action names and the metavariables bound so far; go to definition
//! leads from `signature: Class.method` to the callee in the project's targets.
//!
//! Built on `lsp-server` and `lsp-types` (rust-analyzer's): a synchronous loop over stdio with
//! no async runtime; what reads the project's files runs on job threads (`jobs`), bounded and
//! cancellable, so the loop answers from in-memory text at once.

mod coalesce;
mod features;
mod jobs;
mod lens;
mod text;
mod transport;

use std::collections::HashMap;
use std::time::Duration;

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
    let result = lsp_types::InitializeResult {
        capabilities,
        server_info: Some(lsp_types::ServerInfo {
            name: "regraft".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
    };
    let (id, params) = connection
        .initialize_start()
        .map_err(|e| LspError(e.to_string()))?;
    // A client that opens documents on request is shown a rule's diff in an editor.
    let shows_documents = params
        .pointer("/capabilities/window/showDocument/support")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let result = serde_json::to_value(result).map_err(|e| LspError(e.to_string()))?;
    connection
        .initialize_finish(id, result)
        .map_err(|e| LspError(e.to_string()))?;
    let mut server = Server {
        shows_documents: shows_documents.then(|| connection.sender.clone()),
        documents: HashMap::new(),
        jobs: jobs::Jobs::new(connection.sender.clone()),
        linter: coalesce::Linter::new(connection.sender.clone(), |uri, text| {
            Message::Notification(publish(uri.clone(), features::diagnostics(uri, text)))
        }),
    };
    for message in &connection.receiver {
        match message {
            Message::Request(request) => {
                if connection
                    .handle_shutdown(&request)
                    .map_err(|e| LspError(e.to_string()))?
                {
                    break;
                }
                if let Some(response) = server.request(request) {
                    send(&connection, Message::Response(response))?;
                }
            }
            Message::Notification(note) => {
                // The protocol: `exit` before `shutdown` ends the server with exit code 1.
                if note.method == "exit" {
                    server.finish();
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
    server.finish();
    drop(connection);
    io.join().map_err(|e| LspError(e.to_string()))
}

fn send(connection: &Connection, message: Message) -> Result<(), LspError> {
    connection
        .sender
        .send(message)
        .map_err(|e| LspError(e.to_string()))
}

/// How long each kind of job may survey the project before it answers with what it has.
const HOVER_BUDGET: Duration = Duration::from_secs(2);
const DEFINITION_BUDGET: Duration = Duration::from_secs(5);
const LENS_BUDGET: Duration = Duration::from_secs(20);
const DIFF_BUDGET: Duration = Duration::from_secs(60);

/// The open documents, by URI, the jobs surveying the project for them, and the worker that
/// lints them.
struct Server {
    /// Where to ask the client to show a document (`window/showDocument`), if it can.
    shows_documents: Option<crossbeam_channel::Sender<Message>>,
    documents: HashMap<Uri, String>,
    jobs: jobs::Jobs,
    linter: coalesce::Linter,
}

impl Server {
    /// Stops the linter and every job (each answers first), and lets go of every handle on the
    /// transport: its writer ends, and so the server, only once none is left.
    fn finish(self) {
        let Server {
            shows_documents,
            linter,
            jobs,
            ..
        } = self;
        drop(shows_documents);
        linter.finish();
        jobs.finish();
    }

    /// The notifications a client notification calls for at once (a closed document's
    /// diagnostics cleared).
    fn notify(&mut self, note: Notification) -> Vec<Notification> {
        let uri = match note.method.as_str() {
            "$/cancelRequest" => {
                if let Ok(p) = serde_json::from_value::<lsp_types::CancelParams>(note.params) {
                    self.jobs.cancel(&match p.id {
                        lsp_types::NumberOrString::Number(n) => n.into(),
                        lsp_types::NumberOrString::String(s) => s.into(),
                    });
                }
                return Vec::new();
            }
            DidOpenTextDocument::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidOpenTextDocumentParams>(note.params)
                else {
                    return Vec::new();
                };
                let uri = p.text_document.uri;
                self.linter
                    .changed(&uri, p.text_document.text.clone(), true);
                self.documents.insert(uri.clone(), p.text_document.text);
                uri
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
                let uri = p.text_document.uri;
                self.linter.changed(&uri, change.text.clone(), false);
                self.documents.insert(uri.clone(), change.text);
                uri
            }
            DidCloseTextDocument::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidCloseTextDocumentParams>(note.params)
                else {
                    return Vec::new();
                };
                self.documents.remove(&p.text_document.uri);
                self.linter.closed(&p.text_document.uri);
                self.jobs.modified(&p.text_document.uri);
                // Closed: its diagnostics go with it.
                return vec![publish(p.text_document.uri, Vec::new())];
            }
            _ => return Vec::new(),
        };
        // Diagnostics come from the linter once the document is quiet.
        self.jobs.modified(&uri);
        Vec::new()
    }

    /// The answer to a request, or `None` when a job answers it later; an unknown method gets
    /// `MethodNotFound`.
    fn request(&mut self, request: Request) -> Option<Response> {
        let id = request.id.clone();
        let method = request.method.clone();
        let value = match method.as_str() {
            Completion::METHOD => {
                self.params::<lsp_types::CompletionParams>(request)
                    .map(|(p, text)| {
                        json(features::completion(
                            &text,
                            p.text_document_position.position,
                        ))
                    })
            }
            HoverRequest::METHOD => {
                let Some((p, text)) = self.params::<lsp_types::HoverParams>(request) else {
                    return Some(Response::new_ok(id, serde_json::Value::Null));
                };
                let at = p.text_document_position_params;
                let uri = at.text_document.uri;
                return self.later(id, &method, uri.clone(), HOVER_BUDGET, move |budget| {
                    json(features::hover(&uri, &text, at.position, budget))
                });
            }
            GotoDefinition::METHOD => {
                let Some((p, text)) = self.params::<lsp_types::GotoDefinitionParams>(request)
                else {
                    return Some(Response::new_ok(id, serde_json::Value::Null));
                };
                let at = p.text_document_position_params;
                let uri = at.text_document.uri;
                return self.later(id, &method, uri.clone(), DEFINITION_BUDGET, move |budget| {
                    json(features::definition(&uri, &text, at.position, budget))
                });
            }
            CodeLensRequest::METHOD => {
                let Some((p, text)) = self.params::<lsp_types::CodeLensParams>(request) else {
                    return Some(Response::new_ok(id, serde_json::Value::Null));
                };
                let uri = p.text_document.uri;
                return self.later(id, &method, uri.clone(), LENS_BUDGET, move |budget| {
                    json(
                        features::syntax(&uri, &text)
                            .map(|syntax| lens::lenses(&uri, &text, syntax, budget))
                            .unwrap_or_default(),
                    )
                });
            }
            ExecuteCommand::METHOD => return self.show_diff(request),
            _ => {
                return Some(Response::new_err(
                    id,
                    lsp_server::ErrorCode::MethodNotFound as i32,
                    format!("regraft lsp does not answer {}", request.method),
                ));
            }
        };
        Some(Response::new_ok(id, value.unwrap_or_default()))
    }

    /// Hands `work` to a job thread (`None`: the job answers); a request about a document
    /// that is not open gets `null` at once.
    fn later<W>(
        &mut self,
        id: lsp_server::RequestId,
        method: &str,
        uri: Uri,
        limit: Duration,
        work: W,
    ) -> Option<Response>
    where
        W: FnOnce(&jobs::Budget) -> serde_json::Value + Send + 'static,
    {
        self.jobs.spawn(id, method, uri, limit, work);
        None
    }

    /// `regraft.showDiff URI ID`: the diff of that rule alone over the configured targets, as
    /// the command's result (a string), from a job; a client that can show documents is also
    /// asked to open it (a stock client shows no command's result).
    fn show_diff(&mut self, request: Request) -> Option<Response> {
        let id = request.id.clone();
        let null = || Some(Response::new_ok(id.clone(), serde_json::Value::Null));
        let Ok(params) = serde_json::from_value::<lsp_types::ExecuteCommandParams>(request.params)
        else {
            return null();
        };
        let (uri, rule) = match params.arguments.as_slice() {
            [uri, rule] if params.command == lens::SHOW_DIFF => (uri, rule),
            _ => return null(),
        };
        let (Some(uri), Some(rule)) = (
            uri.as_str().and_then(|u| u.parse::<Uri>().ok()),
            rule.as_str().map(str::to_string),
        ) else {
            return null();
        };
        let Some(text) = self.documents.get(&uri).cloned() else {
            return null();
        };
        let shows = self.shows_documents.clone();
        self.later(
            id,
            &request.method,
            uri.clone(),
            DIFF_BUDGET,
            move |budget| {
                let diff = features::syntax(&uri, &text)
                    .and_then(|syntax| lens::diff(&uri, &text, syntax, &rule, budget));
                if let (Some(diff), Some(sender)) = (&diff, shows) {
                    lens::show(&sender, &rule, diff);
                }
                diff.map_or(serde_json::Value::Null, serde_json::Value::String)
            },
        )
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

/// A result as JSON (`null` for what cannot be serialized, which our types never are).
fn json<T: serde::Serialize>(value: T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or_default()
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
