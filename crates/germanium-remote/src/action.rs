//! Building actions: the input root (the Germanium binary, Z3, the manifest and one slice
//! per job), the command that runs `germanium action` over it, and the action itself.
//!
//! Everything a result depends on is in the action's digest: both binaries by content, the
//! options by the command line, each job's slice text, member and untrusted functions by the
//! manifest and the files. Two programs whose members' slices, jobs and tools are equal have
//! equal actions and may share the result; any difference in any of them gives another
//! digest (SHA-256 throughout).

use std::path::Path;
use std::time::Duration;

use bazel_remote_apis::build::bazel::remote::execution::v2::{
    command::EnvironmentVariable, platform::Property, Action, Command, Digest, Directory, FileNode,
    Platform,
};

use crate::digest::Blob;
use crate::protocol::{Job, Manifest, MANIFEST, RESULTS};

/// The two executables every action carries, read and hashed once per run.
#[derive(Clone, Debug)]
pub struct Tools {
    pub germanium: Blob,
    pub z3: Blob,
}

impl Tools {
    pub fn load(germanium: &Path, z3: &Path) -> std::io::Result<Tools> {
        let read = |p: &Path| {
            std::fs::read(p)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", p.display())))
        };
        Ok(Tools {
            germanium: Blob::new(read(germanium)?),
            z3: Blob::new(read(z3)?),
        })
    }
}

/// Members to put into an action, with the program they are verified in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobInput {
    pub members: Vec<String>,
    /// A member's slice (`germanium_cache::Slice::text`), or the whole program for several.
    pub text: String,
    pub failed_functions: Vec<String>,
}

/// An action ready to be looked up or executed, with every blob it needs.
#[derive(Clone, Debug)]
pub struct PreparedAction {
    pub digest: Digest,
    pub action: Action,
    /// The action, command, input root and file blobs (the tools included).
    pub blobs: Vec<Blob>,
}

/// The platform the test cluster's workers and common Linux worker pools advertise.
fn platform() -> Platform {
    Platform {
        properties: vec![
            Property {
                name: "ISA".into(),
                value: "x86-64".into(),
            },
            Property {
                name: "OSFamily".into(),
                value: "linux".into(),
            },
        ],
    }
}

/// The action verifying `jobs` with the verification options `option_args` (command-line
/// arguments of `germanium action`), each job alone, within `timeout`.
pub fn prepare(
    tools: &Tools,
    option_args: &[String],
    jobs: &[JobInput],
    timeout: Duration,
) -> PreparedAction {
    let mut files: Vec<(String, Blob, bool)> = vec![
        ("germanium".into(), tools.germanium.clone(), true),
        ("z3".into(), tools.z3.clone(), true),
    ];
    let mut manifest = Manifest { jobs: Vec::new() };
    for (i, job) in jobs.iter().enumerate() {
        let file = format!("{i}.vpr");
        let mut failed = job.failed_functions.clone();
        failed.sort();
        failed.dedup();
        manifest.jobs.push(Job {
            file: file.clone(),
            members: job.members.clone(),
            failed_functions: failed,
        });
        files.push((file, Blob::new(job.text.clone().into_bytes()), false));
    }
    files.push((MANIFEST.into(), Blob::new(manifest.to_bytes()), false));
    // REAPI: a directory's files sorted by name.
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let root = Directory {
        files: files
            .iter()
            .map(|(name, blob, executable)| FileNode {
                name: name.clone(),
                digest: Some(blob.digest.clone()),
                is_executable: *executable,
                node_properties: None,
            })
            .collect(),
        ..Directory::default()
    };
    let mut arguments: Vec<String> = vec!["./germanium".into(), "action".into()];
    arguments.extend(["--z3".into(), "./z3".into()]);
    arguments.extend(option_args.iter().cloned());
    arguments.extend(["--output".into(), RESULTS.into(), MANIFEST.into()]);
    let command = Command {
        arguments,
        environment_variables: vec![EnvironmentVariable {
            name: "RUST_BACKTRACE".into(),
            value: "0".into(),
        }],
        #[allow(deprecated)]
        output_files: vec![RESULTS.into()],
        output_paths: vec![RESULTS.into()],
        #[allow(deprecated)]
        platform: Some(platform()),
        ..Command::default()
    };
    let root_blob = Blob::of_message(&root);
    let command_blob = Blob::of_message(&command);
    let action = Action {
        command_digest: Some(command_blob.digest.clone()),
        input_root_digest: Some(root_blob.digest.clone()),
        timeout: Some(bazel_remote_apis::google::protobuf::Duration {
            seconds: timeout.as_secs() as i64,
            nanos: 0,
        }),
        do_not_cache: false,
        platform: Some(platform()),
        ..Action::default()
    };
    let action_blob = Blob::of_message(&action);
    let mut blobs: Vec<Blob> = files.into_iter().map(|(_, blob, _)| blob).collect();
    blobs.extend([root_blob, command_blob, action_blob.clone()]);
    PreparedAction {
        digest: action_blob.digest,
        action,
        blobs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> Tools {
        Tools {
            germanium: Blob::new(b"germanium binary".to_vec()),
            z3: Blob::new(b"z3 binary".to_vec()),
        }
    }

    fn job(member: &str, text: &str, failed: &[&str]) -> JobInput {
        JobInput {
            members: vec![member.into()],
            text: text.into(),
            failed_functions: failed.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn equal_inputs_give_equal_actions_and_any_difference_another() {
        let args = vec!["--backend".to_string(), "symbex".to_string()];
        let t = Duration::from_secs(600);
        let base = prepare(
            &tools(),
            &args,
            &[job("m", "method m() {}", &["f", "g"])],
            t,
        );
        let again = prepare(
            &tools(),
            &args,
            &[job("m", "method m() {}", &["g", "f"])],
            t,
        );
        assert_eq!(base.digest, again.digest, "the failed set is a set");
        let others = [
            prepare(
                &tools(),
                &args,
                &[job("m", "method m() { }", &["f", "g"])],
                t,
            ),
            prepare(
                &tools(),
                &args,
                &[job("n", "method m() {}", &["f", "g"])],
                t,
            ),
            prepare(&tools(), &args, &[job("m", "method m() {}", &["f"])], t),
            prepare(&tools(), &[], &[job("m", "method m() {}", &["f", "g"])], t),
            prepare(
                &Tools {
                    z3: Blob::new(b"another z3".to_vec()),
                    ..tools()
                },
                &args,
                &[job("m", "method m() {}", &["f", "g"])],
                t,
            ),
        ];
        for other in others {
            assert_ne!(base.digest, other.digest);
        }
    }

    #[test]
    fn the_action_carries_every_blob_it_names() {
        let a = prepare(
            &tools(),
            &[],
            &[
                job("a", "method a() {}", &[]),
                job("b", "method b() {}", &[]),
            ],
            Duration::from_secs(60),
        );
        let has = |d: &Digest| a.blobs.iter().any(|b| &b.digest == d);
        assert!(has(&a.digest));
        assert!(has(a.action.command_digest.as_ref().unwrap()));
        let root = a
            .blobs
            .iter()
            .find(|b| Some(&b.digest) == a.action.input_root_digest.as_ref())
            .unwrap();
        let root: Directory = prost::Message::decode(root.bytes.as_slice()).unwrap();
        let names: Vec<&str> = root.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["0.vpr", "1.vpr", "germanium", MANIFEST, "z3"]);
        for f in &root.files {
            assert!(has(f.digest.as_ref().unwrap()));
        }
    }
}
