"""Remote data loss through service CLIs and HTTP APIs: cloud storage and compute, secrets managers,
backups, queues and streams, search indexes, forges and CI, infrastructure tools.

``PACKS`` is the table (one :class:`~.packs.Pack` per program, matched by :mod:`.packs`): a delete that
can be undone or that the user should simply confirm asks; one that is gone for good denies (no
recovery window, ``destroy``/``purge``, a teardown with its confirmation switched off, every index at
once). Dry runs, previews, help and the read-only subcommands (list, get, describe, show, status) match
no rule. What needs reasoning stays code: an HTTP ``DELETE`` (:func:`http`: the URL and the service
behind it), ``npx``/``bunx`` running a package's program (:func:`launched`), ``java -jar jenkins-cli.jar``,
``doppler run -- cmd`` and ``kubectl exec``.
"""

from __future__ import annotations

from . import packs
from .lazyre import LazyRe
from .packs import Pack, rule

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from .analyze import Analyzer, Call

RULE = "infra"
INSTEAD = ("There is no undo for this: show the user the exact command (and its dry run, if the tool has one) "
           "and let them run it.")
A, D = "ask", "deny"
_DELETE = "delete|rm|remove"
_GONE = "deletes remote resources (no undo from here)"
# what `gh`/`glab` delete on the forge (not `gh cache delete`: caches are rebuilt; not `gh alias delete`: local)
_GH_NOUNS = "repo|release|secret|variable|gist|label|ssh-key|gpg-key|codespace|project|run|issue"

_CLOUD = {
    "aws": Pack([
        rule("s3 rm", A, "deletes S3 objects"),
        rule("s3 rb", A, "removes an S3 bucket", unless="--dryrun"),
        rule("s3 sync", A, "deletes objects at the destination that the source lacks", opts="--delete"),
        rule("* delete-*|terminate-*|batch-delete-*|deregister-*", A, "deletes cloud resources"),
        rule("kms schedule-key-deletion", A, "schedules a KMS key for deletion: what it encrypted becomes unreadable"),
        rule("* purge-*", D, "purges every message in the queue for good"),
        rule("secretsmanager delete-secret", D, "deletes a secret with no recovery window",
             opts="--force-delete-without-recovery"),
        rule("rds delete-db-*", D, "deletes a database without a final snapshot", opts="--skip-final-snapshot"),
        rule("redshift delete-cluster", D, "deletes a data warehouse without a final snapshot",
             opts="--skip-final-cluster-snapshot"),
    ], safe="--dryrun --dry-run help", takes="--profile --region --output --endpoint-url --query --color "
        "--cli-read-timeout --cli-connect-timeout --ca-bundle"),
    "gcloud": Pack([
        rule("** delete|delete-*|bulk-delete", A, "deletes cloud resources", unless="config"),
        rule("** storage rm", A, "deletes Cloud Storage objects"),
        rule("** storage rsync", A, "deletes destination objects the source lacks",
             opts="--delete-unmatched-destination-objects"),
        rule("** destroy", A, "schedules key or secret versions for destruction"),
        rule("** secrets versions destroy", D, "destroys a secret version for good"),
    ], safe="-h --help help --dry-run", takes="--project --account --configuration --format --verbosity "
        "--impersonate-service-account --billing-project"),
    "gsutil": Pack([
        rule("rm", A, "deletes Cloud Storage objects"),
        rule("rb", A, "removes a bucket"),
        rule("rsync", A, "deletes destination objects the source lacks", opts="-d", unless="-n"),
    ], safe="--help help", takes="-h -o -u -i"),
    "az": Pack([
        rule("** delete|delete-batch", A, "deletes Azure resources"),
        rule("storage remove", A, "deletes Azure Storage files or blobs"),
        rule("** sync", A, "deletes destination blobs the source lacks", opts="--delete-destination=true"),
        rule("** purge", D, "purges a soft-deleted vault, key or secret for good"),
        rule("backup protection disable", A, "stops a backup and deletes its recovery points",
             opts="--delete-backup-data=true"),
    ], safe="-h --help --dryrun --dry-run", takes="--subscription --output -o --query"),
    "azcopy": Pack([
        rule("rm|remove", A, "deletes Azure Storage files or blobs"),
        rule("sync", A, "deletes destination files the source lacks", opts="--delete-destination=true"),
    ], safe="-h --help --dry-run"),
    "s3cmd": Pack([
        rule("del|rm|rb", A, "deletes S3 objects or a bucket"),
        rule("sync", A, "deletes objects the source lacks", opts="--delete-removed --delete-after"),
    ], safe="-h --help -n --dry-run", takes="-c --config"),
    "mc": Pack([
        rule("rm|rb", A, "deletes objects or a bucket in object storage"),
        rule("rm|rb", D, "deletes every bucket of the deployment", opts="--dangerous"),
        rule("mirror", A, "deletes destination objects the source lacks", opts="--remove"),
    ], safe="-h --help --dry-run"),
    "bq": Pack([rule("rm", A, "deletes a BigQuery dataset, table or model")], safe="-h --help help"),
    "oci": Pack([rule("** delete", A, _GONE)], safe="-h --help --dry-run"),
    "doctl": Pack([rule("** delete|rm", A, _GONE)], safe="-h --help",
                  takes="--context -t --access-token -o --output"),
    "hcloud": Pack([rule("** delete", A, _GONE)], takes="--context"),
    "linode-cli": Pack([rule("** delete|rm", A, _GONE)]),
    "scw": Pack([rule("** delete", A, _GONE)]),
    "openstack": Pack([rule("** delete", A, _GONE)], takes="--os-cloud --os-project-name --os-region-name"),
    "pscale": Pack([rule("** delete", A, "deletes a PlanetScale database or branch")]),
    "turso": Pack([rule("** destroy", A, "destroys a Turso database or group")]),
    **dict.fromkeys(("neonctl", "neon"), Pack([rule("** delete", A, "deletes a Neon project, branch or database")])),
    **dict.fromkeys(("skopeo", "crane"), Pack([rule("delete", A, "deletes an image from its registry")])),
    "eksctl": Pack([rule("delete", A, "deletes an EKS cluster or its node groups")], safe="-h --help"),
}

_SECRETS = {
    "vault": Pack([
        rule("secrets disable", D, "disables a secrets engine: every secret in it is revoked and deleted"),
        rule("kv destroy", D, "destroys secret versions for good"),
        rule("kv metadata delete", D, "deletes every version of a secret and its metadata for good"),
        rule("kv delete", A, "deletes a secret (soft: `vault kv undelete` restores it)"),
        rule("delete", A, "deletes a secret path"),
        rule("auth disable", A, "disables an auth method and revokes its tokens"),
        rule("policy delete", A, "deletes a policy"),
        rule("lease revoke", A, "revokes every lease under a prefix", opts="-prefix"),
    ], safe="-h -help --help", clusters=False, takes="-address -namespace -mount"),
    "op": Pack([rule(f"* {_DELETE}", A, "deletes 1Password items or vaults"),
                rule("delete", A, "deletes 1Password items")], takes="--account --vault"),
    "doppler": Pack([rule(f"* {_DELETE}", A, "deletes Doppler secrets, configs or projects")],
                    takes="-p --project -c --config"),
    "infisical": Pack([rule(f"* {_DELETE}", A, "deletes Infisical secrets")], takes="--env --projectId"),
    "bw": Pack([rule("delete", A, "moves a Bitwarden item to the trash"),
                rule("delete", D, "deletes a Bitwarden item for good", opts="--permanent")]),
}

_BACKUPS = {
    "restic": Pack([
        rule("forget", A, "removes backup snapshots"),
        rule("forget", D, "removes backup snapshots and prunes their data for good", opts="--prune"),
        rule("forget", D, "removes every snapshot of the groups it names", opts="--unsafe-allow-remove-all"),
        rule("prune", A, "deletes the data of forgotten snapshots for good"),
        rule("key remove|rm", A, "removes a repository key"),
    ], safe="-h --help -n --dry-run", takes="-r --repo --repository-file -p --password-file "
        "--password-command --cache-dir -o --option --limit-upload --limit-download --cacert --tls-client-cert"),
    "borg": Pack([
        rule("delete", A, "deletes backup archives", unless="--cache-only"),
        rule("prune", A, "deletes old backup archives"),
        rule("compact", A, "frees the space of deleted archives: they cannot be restored after it"),
        rule("rdelete|repo-delete", D, "deletes the whole backup repository"),
    ], safe="-h --help -n --dry-run", takes="--rsh --remote-path --lock-wait -r --repo --umask"),
    "rclone": Pack([
        rule("purge", D, "removes a remote folder and everything in it, ignoring filters"),
        rule("delete|deletefile", A, "deletes remote files"),
        rule("sync", A, "deletes destination files the source lacks"),
        rule("cleanup", A, "empties the remote's trash and old versions for good"),
    ], safe="-h --help -n --dry-run -i --interactive", takes="--config --log-file"),
    "kopia": Pack([rule("snapshot delete|rm", A, "deletes backup snapshots", opts="--delete")]),
    "duplicity": Pack([rule("remove-*|cleanup", A, "deletes old backups", opts="--force")]),
    "velero": Pack([
        rule("** delete", A, "deletes Velero backups, restores or schedules"),
        rule("** delete", D, "deletes every Velero backup", opts="--all+--confirm"),
    ], takes="-n --namespace --kubeconfig --kubecontext"),
}

_KAFKA_TAKES = "--bootstrap-server --topic --zookeeper --command-config --offset-json-file --group"
_QUEUES = {
    **dict.fromkeys(("kafka-topics", "kafka-topics.sh"), Pack(
        [rule("", A, "deletes a Kafka topic and its messages", opts="--delete"),
         rule("", D, "deletes every Kafka topic", opts="--delete+--topic=.* --delete+--topic=*")],
        safe="--help -h --list --describe",
        takes=_KAFKA_TAKES)),
    **dict.fromkeys(("kafka-delete-records", "kafka-delete-records.sh"), Pack(
        [rule("", A, "deletes records from Kafka partitions")], safe="--help -h", takes=_KAFKA_TAKES)),
    **dict.fromkeys(("kafka-consumer-groups", "kafka-consumer-groups.sh"), Pack(
        [rule("", A, "deletes consumer groups or their offsets", opts="--delete --delete-offsets")],
        safe="--help -h --dry-run", takes=_KAFKA_TAKES)),
    "rpk": Pack([rule("topic|group delete|trim-prefix", A, "deletes Redpanda topics, records or groups")]),
    "rabbitmqctl": Pack([
        rule("delete_vhost|delete_user|delete_queue", A, "deletes a RabbitMQ vhost, user or queue"),
        rule("purge_queue", D, "purges every message in the queue for good"),
        rule("reset|force_reset", A, "resets the node: every queue, message, user and vhost on it is deleted"),
    ], safe="-h --help", takes="-n --node -p --vhost -t --timeout"),
    "rabbitmqadmin": Pack([
        rule("delete", A, "deletes a RabbitMQ object"),
        rule("purge", D, "purges every message in the queue for good"),
    ], takes="-H --host -P --port -V --vhost -u --username -p --password -c --config -N --node"),
    "nats": Pack([
        rule("stream|str|kv|object|obj|consumer|con del|delete|rm|rmm", A, "deletes a NATS stream, bucket or message"),
        rule("stream|str|kv purge", D, "purges every message of the stream for good"),
    ], takes="-s --server --creds --context --user --password --nkey --tlscert --tlskey --tlsca"),
    "pulsar-admin": Pack([rule("** delete|delete-partitioned-topic", A, "deletes Pulsar topics, namespaces or tenants")]),
    "etcdctl": Pack([rule("del", A, "deletes etcd keys")], takes="--endpoints --cert --key --cacert"),
    "consul": Pack([rule("kv delete", A, "deletes Consul keys")], safe="-h -help --help", clusters=False),
    "influx": Pack([rule("delete", A, "deletes InfluxDB data"), rule("bucket delete", A, "deletes an InfluxDB bucket")]),
    "algolia": Pack([rule("indices|objects delete|clear", A, "deletes an Algolia index or its records")]),
}

_FORGES = {
    "gh": Pack([
        rule(f"{_GH_NOUNS} delete|delete-asset", A, "deletes it on GitHub (no undo from here)"),
        rule("repo deploy-key delete", A, "deletes a deploy key"),
        rule("secret|variable remove", A, "deletes it on GitHub (no undo from here)"),
        rule("api", A, "sends a DELETE to the GitHub API", opts="-X=DELETE --method=DELETE"),
    ], takes="-R --repo -X --method"),
    "glab": Pack([
        rule(f"{_GH_NOUNS}|mr|ci|snippet|schedule|deploy-key|token|cluster delete", A,
             "deletes it on GitLab (no undo from here)"),
        rule("api", A, "sends a DELETE to the GitLab API", opts="-X=DELETE --method=DELETE"),
    ], takes="-R --repo -X --method"),
    "circleci": Pack([rule("* delete|remove-secret", A, "deletes a CircleCI context or its secrets")]),
    "jenkins-cli": Pack([rule("** delete-*", A, "deletes Jenkins jobs, builds, nodes or credentials")],
                        safe="-h --help help", takes="-s -auth -i", clusters=False),
    "heroku": Pack([
        rule("apps destroy|delete", A, "deletes a Heroku app and its add-ons"),
        rule("destroy", A, "deletes a Heroku app and its add-ons"),
        rule("addons destroy|remove|delete", A, "deletes a Heroku add-on and its data"),
        rule("pg backups delete|destroy", A, "deletes a database backup"),
        rule("pg reset", D, "erases every table of the app's database"),
    ], colon=True, takes="-a --app -r --remote"),
    "fly": Pack([
        rule(f"apps|app destroy|{_DELETE}", A, "deletes a Fly app"),
        rule("destroy", A, "deletes a Fly app"),
        rule(f"volumes|volume|vol|machines|machine|m|redis|postgres|pg destroy|{_DELETE}", A,
             "deletes Fly volumes, machines or databases (a volume's data is gone for good)"),
    ], takes="-a --app -c --config -t --access-token"),
    "vercel": Pack([
        rule(_DELETE, A, "removes Vercel deployments or a whole project"),
        rule(f"project|projects|env|domains|domain|dns|alias|blob {_DELETE}", A, "removes it from Vercel"),
    ], takes="--scope -S --token -t --cwd -A --local-config -Q --global-config"),
    "netlify": Pack([
        rule("sites|addons|blobs delete", A, "deletes a Netlify site, add-on or blob"),
        rule("env unset", A, "deletes a Netlify environment variable"),
    ], colon=True),
    "firebase": Pack([
        rule("** delete|remove", A, "deletes Firebase data or resources", unless="target"),
        rule("hosting disable", A, "takes the Firebase Hosting site offline"),
        rule("firestore delete", D, "deletes the entire Firestore database", opts="--all-collections"),
        rule("database remove /", D, "deletes the entire Realtime Database"),
    ], colon=True, takes="-P --project --config"),
    "supabase": Pack([
        rule("db reset", A, "resets the local database: every row in it is gone"),
        rule("db reset", D, "resets the linked remote database: every row in it is gone", opts="--linked --db-url"),
        rule("stop", A, "stops the local stack and deletes its data volumes", opts="--no-backup"),
        rule(f"projects|functions|branches|orgs|storage|snippets {_DELETE}", A, "deletes Supabase resources"),
        rule("secrets unset", A, "deletes Supabase secrets"),
    ], takes="--workdir --profile -p --password --db-url --project-ref"),
    "wrangler": Pack([rule("** delete", A, "deletes Cloudflare workers, databases, buckets or keys")], colon=True,
                     takes="-c --config -e --env"),
    "railway": Pack([rule("down", A, "removes the latest Railway deployment"),
                     rule("** delete", A, "deletes Railway resources")]),
}

_KUBE_RULES = [
    rule("delete ns|namespace|namespaces|pv|persistentvolume|persistentvolumes|pvc|persistentvolumeclaim|"
         "persistentvolumeclaims|node|nodes|no|crd|crds|customresourcedefinition|customresourcedefinitions",
         A, "deletes cluster resources and the data they hold"),
    rule("delete", A, "deletes every resource of a kind", opts="--all -A --all-namespaces"),
]
_KUBE_SAFE = "-h --help --dry-run --dry-run=client --dry-run=server"
_KUBE_TAKES = ("-n --namespace --context --kubeconfig --cluster --user -s --server --token -l --selector -o --output "
               "-f --filename --as --grace-period --timeout --field-selector -c --container")
_TERRAFORM = Pack([
    rule("destroy", A, "destroys managed infrastructure"),
    rule("destroy", D, "destroys managed infrastructure without asking", opts="-auto-approve --auto-approve"),
    rule("apply", A, "destroys managed infrastructure", opts="-destroy --destroy"),
    rule("apply", D, "destroys managed infrastructure without asking",
         opts="-destroy+-auto-approve --destroy+--auto-approve"),
    rule("state rm", A, "removes resources from the state: the tool forgets them"),
    rule("workspace delete", A, "deletes a workspace and its state"),
], safe="-h -help --help", clusters=False)
_INFRA = {
    "terraform": _TERRAFORM, "tofu": _TERRAFORM,
    "terragrunt": Pack([
        rule("** destroy|destroy-all", A, "destroys managed infrastructure"),
        rule("** destroy|destroy-all", D, "destroys managed infrastructure without asking",
             opts="-auto-approve --auto-approve --terragrunt-non-interactive --non-interactive"),
    ], safe="-h -help --help", clusters=False),
    "pulumi": Pack([
        rule("destroy|down", A, "destroys the stack's infrastructure"),
        rule("destroy|down", D, "destroys the stack's infrastructure without asking", opts="-y --yes"),
        rule("stack rm", A, "removes a stack and its history"),
        rule("stack rm", D, "removes a stack even though it still manages resources", opts="-f --force"),
        rule("state delete", A, "deletes a resource from the stack's state"),
    ], safe="-h --help --preview-only", takes="-s --stack -C --cwd"),
    "cdk": Pack([
        rule("destroy", A, "destroys the CloudFormation stacks"),
        rule("destroy", D, "destroys the CloudFormation stacks without asking", opts="-f --force"),
    ], takes="-a --app --profile -c --context"),
    "cdktf": Pack([
        rule("destroy", A, "destroys managed infrastructure"),
        rule("destroy", D, "destroys managed infrastructure without asking", opts="--auto-approve"),
    ]),
    "sam": Pack([
        rule("delete", A, "deletes the deployed stack"),
        rule("delete", D, "deletes the deployed stack without asking", opts="--no-prompts"),
    ]),
    "serverless": Pack([rule("remove", A, "removes the deployed service")]),
    "sls": Pack([rule("remove", A, "removes the deployed service")]),
    "vagrant": Pack([rule("destroy", A, "destroys a virtual machine and its disks")]),
    "nomad": Pack([rule("job stop", A, "stops a job and purges it", opts="-purge"),
                   rule("volume|namespace delete", A, "deletes a Nomad volume or namespace")], clusters=False),
    "kubectl": Pack(_KUBE_RULES, safe=_KUBE_SAFE, takes=_KUBE_TAKES),
    "oc": Pack([rule("delete project|projects", A, "deletes an OpenShift project and everything in it"), *_KUBE_RULES],
               safe=_KUBE_SAFE, takes=_KUBE_TAKES),
    "helm": Pack([rule("uninstall|delete|del|un", A, "removes a release and its resources")],
                 safe="-h --help --dry-run", takes="-n --namespace --kube-context --kubeconfig"),
}

PACKS: dict[str, Pack] = {**_CLOUD, **_SECRETS, **_BACKUPS, **_QUEUES, **_FORGES, **_INFRA}
PACKS["flyctl"] = PACKS["fly"]
PACKS["helm3"] = PACKS["helm"]
# npm packages whose program has another name (`npx firebase-tools ...` runs `firebase`)
PACKAGES = {"firebase-tools": "firebase", "netlify-cli": "netlify", "aws-cdk": "cdk", "@railway/cli": "railway",
            "@vercel/cli": "vercel"}
# What every destructive call of a PACKS program holds, for the bash prefilter (which flags these instead of
# the programs' names, as it flags git's subcommands: `aws s3 ls` or `gh pr view` never starts Python):
# STEMS anywhere in the command (`delete-bucket`, `batch-delete-image`, `_delete_by_query`, `-XDELETE`), and
# TRIGGERS as whole words. tests/guardian/test_packs.py holds every rule of PACKS to one, through the real hook.
STEMS = ("delet", "destroy", "purge", "remove", "terminate-", "deregister-", "force_reset", "trim-prefix",
         "--no-backup")
TRIGGERS = ("rb", "del", "rmm", "un", "forget", "prune", "compact", "sync", "cleanup", "down", "clear", "unset",
            "revoke", "disable", "uninstall")
LAUNCHERS = frozenset({"npx", "bunx", "pnpx"})
HTTP_CLIENTS = frozenset({"curl", "curlie", "wget", "http", "https", "httpie", "xh"})
# programs that run another command after `--` with secrets in its environment
_RUNNERS = {"doppler": "run", "op": "run", "infisical": "run"}


def judge(a: Analyzer, call: Call) -> None:
    name = PACKAGES.get(call.name, call.name)
    args = call.args
    if name in _RUNNERS and args[:1] == [_RUNNERS[name]]:
        if "--" in args:
            _inner(a, call, args[args.index("--") + 1:])
        elif "--command" in args[:-1]:
            a.script(args[args.index("--command") + 1], call.depth + 1)
        return
    if name in ("kubectl", "oc") and args[:1] == ["exec"]:
        from .rules_exec import container

        container(a, call)
        return
    packs.judge(a, call, PACKS[name], RULE, INSTEAD)
    if name == "wrangler":
        _wrangler_sql(a, call)
    elif name == "borg":
        _borg_repository(a, call)


def java(a: Analyzer, call: Call) -> None:
    """``java -jar jenkins-cli.jar -s URL delete-job x``: the Jenkins CLI's own rules."""
    args = call.args
    if "-jar" in args:
        i = args.index("-jar")
        if i + 1 < len(args) and args[i + 1].rsplit("/", 1)[-1].startswith("jenkins-cli"):
            packs.judge(a, call, PACKS["jenkins-cli"], RULE, INSTEAD, args[i + 2:])


_NPX_TAKES = frozenset({"-p", "--package", "--prefix", "-w", "--workspace", "--cache", "--registry"})


def launched(a: Analyzer, call: Call) -> None:
    """``npx [-y] vercel@latest remove x``, ``bunx``, ``pnpx``: judge the program the package runs, as if
    it were typed (``npx -c 'cmd'`` runs ``cmd``)."""
    args = call.args
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] in ("-c", "--call") and i + 1 < len(args):
            a.script(args[i + 1], call.depth + 1)
            return
        i += 2 if args[i] in _NPX_TAKES else 1
    if i >= len(args):
        return
    pkg = args[i]
    at = pkg.find("@", 1)
    pkg = pkg[:at] if at > 0 else pkg
    _inner(a, call, [PACKAGES.get(pkg, pkg.rsplit("/", 1)[-1]), *args[i + 1:]])


# The programs this family judges (dispatch.py); a package name that is not its program's name
# (`npx firebase-tools`) is a word of its own for the prefilter.
TABLE = {**dict.fromkeys(PACKS, judge), **dict.fromkeys((p for p in PACKAGES if "/" not in p), judge), "java": java}


def _inner(a: Analyzer, call: Call, words: list[str]) -> None:
    from .rules_exec import shell_quote

    if words:
        a.script(" ".join(shell_quote(w) for w in words), call.depth + 1)


_BORG_ARCHIVES = ("-r", "--repo", "-a", "--glob-archives", "--match-archives", "--first", "--last", "--older",
                  "--newer", "--oldest", "--newest", "--cache-only", "-n", "--dry-run", "-h", "--help")


def _borg_repository(a: Analyzer, call: Call) -> None:
    """``borg delete REPO`` (borg 1: a repository and no ``::archive``, no archive filter) deletes the
    whole repository, not an archive."""
    pos = packs.positionals(PACKS["borg"], call.args)
    if pos[:1] == ["delete"] and len(pos) <= 2 and not any("::" in p for p in pos) and not any(
            x.split("=", 1)[0] in _BORG_ARCHIVES for x in call.args):
        a.add(D, RULE, f"`{call.show()}` deletes the whole backup repository", INSTEAD)


def _wrangler_sql(a: Analyzer, call: Call) -> None:
    """``wrangler d1 execute DB --command "DROP TABLE users"``: the statement, judged like any SQL."""
    from . import rules_vcs_db, sql

    for text in rules_vcs_db._opt_values(call.args, (), ("--command",)):
        rules_vcs_db._report_sql(a, call, sql.sql_findings(text))


# -- HTTP APIs ------------------------------------------------------------------------------------

_LOCAL_HOSTS = frozenset({"", "localhost", "127.0.0.1", "0.0.0.0", "[::1]", "::1", "host.docker.internal"})
# ports and paths of search engines and vector stores: a DELETE there drops an index, even on localhost
_INDEX_PORTS = frozenset({"9200", "9201", "9243", "7700", "8108", "6333", "8983", "19530"})
_INDEX_PATHS = frozenset({"indexes", "indices", "collections", "_snapshot", "_data_stream", "_index_template",
                          "_template", "_component_template", "_ilm", "schema"})
def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# options of curl, wget and HTTPie whose value is the next word
_CURL_TAKES = _words("-X -H -d -F -u -o -e -A -b -c -T -w -x -m -K -E -r -z -Y -y -U -Q -t") | _words(
    "--request --header --data --data-raw --data-binary --data-urlencode --data-ascii --json --form --form-string "
    "--user --output --referer --user-agent --cookie --cookie-jar --upload-file --write-out --proxy --max-time "
    "--connect-timeout --config --cacert --cert --key --resolve --connect-to --retry --retry-delay --range "
    "--limit-rate --max-redirs --interface --unix-socket --oauth2-bearer --noproxy --proxy-user --variable "
    "--aws-sigv4 --url --header-file -O --output-document -P --directory-prefix --post-data --body-data "
    "--method -a --auth -A --auth-type --session --session-read-only")
_CURL_SHORT_TAKES = frozenset("HdFuoeAbcTwxmKErzYyUQt")
_CLUSTER = LazyRe(r"^-[A-Za-z]{2,}")
_DATA_OPTS = ("-d", "--data", "--data-raw", "--data-binary", "--json", "--post-data", "--body-data")
_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})


def http(a: Analyzer, call: Call) -> None:
    """A DELETE (or a delete-by-query) sent with curl, wget, HTTPie or xh."""
    method, urls, data = _request(call)
    for url in urls:
        found = _http_verdict(method, url, data)
        if found:
            a.add(found[0], RULE, f"`{call.show()}` {found[1]}", INSTEAD)


def _request(call: Call) -> tuple[str, list[str], str]:
    """(method, URLs, request body) of an HTTP client call. curl and wget take the method as an option
    and every other word as a URL; HTTPie and xh take ``[METHOD] URL [items]``."""
    args = call.args
    method, data, pos = "", "", []
    i = 0
    while i < len(args):
        x, nxt = args[i], (args[i + 1] if i + 1 < len(args) else "")
        takes = x in _CURL_TAKES
        if x in ("-X", "--request", "--method"):
            method = nxt
        elif x.startswith(("--request=", "--method=")):
            method = x.split("=", 1)[1]
        elif _CLUSTER.match(x) and "X" in x:  # -XDELETE, -sX DELETE, -sXDELETE
            method = x[x.index("X") + 1:] or nxt
            takes = x.endswith("X")
        elif x in _DATA_OPTS or x.startswith(tuple(o + "=" for o in _DATA_OPTS)):
            data += " " + (nxt if x in _DATA_OPTS else x.split("=", 1)[1])
        elif x.startswith("-d") and not _CLUSTER.match(x):  # -d'{"query": ...}'
            data += " " + x[2:]
        elif x == "--url":
            pos.append(nxt)
        elif _CLUSTER.match(x) and x[-1] in _CURL_SHORT_TAKES:
            takes = True
        elif not x.startswith("-") or x == "-":
            pos.append(x)
        i += 2 if takes else 1
    if call.name in ("curl", "curlie", "wget"):
        return method.upper(), pos, data
    if pos and pos[0].upper() in _METHODS:
        method, pos = pos[0], pos[1:]
    return (method or "GET").upper(), pos[:1], data


def _http_verdict(method: str, url: str, data: str) -> tuple[str, str] | None:
    host, port, segs = _url_parts(url)
    found = _delete_call(url, segs, data)
    if found or method != "DELETE":
        return found
    if any(s == "_all" or "*" in s for s in segs):
        return (D, "deletes every index (or everything) the pattern matches")
    index = port in _INDEX_PORTS or bool(_INDEX_PATHS.intersection(segs))
    if host in _LOCAL_HOSTS and not index:
        return None  # a DELETE to one's own dev server: the everyday test of an API being written
    return (A, "deletes a search index or its data" if index else "deletes data behind a remote API")


def _delete_call(url: str, segs: list[str], data: str) -> tuple[str, str] | None:
    """A delete sent with another method: Elasticsearch's delete-by-query, Solr's delete and unload,
    Algolia's clear, Jenkins' doDelete."""
    low = url.lower()
    if "_delete_by_query" in segs or "<delete>" in data:
        if "match_all" in data or "*:*" in data or "q=*" in low:
            return (D, "deletes every document of the index")
        return (A, "deletes the documents a query matches")
    if "deleteindex=true" in low or "deleteinstancedir=true" in low or "action=delete" in low:
        return (A, "deletes a Solr core or collection")
    if segs[-1:] == ["clear"] and "indexes" in segs:
        return (A, "deletes every record of a search index")
    if segs[-1:] == ["doDelete"]:
        return (A, "deletes a Jenkins job and its builds")
    return None


def _url_parts(url: str) -> tuple[str, str, list[str]]:
    """(host, port, path segments) of ``url``; ``:9200/x`` (HTTPie's localhost) has the host ''."""
    rest = url.split("://", 1)[1] if "://" in url else url
    hostport, _, path = rest.partition("/")
    path = path.split("?", 1)[0].split("#", 1)[0]
    hostport = hostport.rsplit("@", 1)[-1].lower()
    host, _, port = hostport.rpartition(":") if hostport.count(":") == 1 else (hostport, "", "")
    if "\x00" in hostport:
        host = "\x00"
    return host, port, [s for s in path.split("/") if s]
