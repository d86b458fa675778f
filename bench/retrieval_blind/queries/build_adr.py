import os as _os
_DATA = _os.path.dirname(_os.path.abspath(__file__))
_DATA = _os.path.dirname(_DATA)
_REPO = _os.path.dirname(_os.path.dirname(_DATA))
_SHARED = _os.path.join(_os.path.dirname(_REPO), 'shared', 'corpora')
import sys, os, re, random; sys.path.insert(0, _os.path.join(_DATA, "queries"))
from common import write
ROOT = _os.path.join(_SHARED, "adr")
fs = sorted(f for f in os.listdir(ROOT) if f[0].isdigit())
order = random.Random(29).sample(fs, len(fs))
KINDS = ["paraphrase", "keyword", "question"]
def title(f):
    return re.search(r"(?m)^#\s+(.+)$", open(os.path.join(ROOT, f)).read()).group(1).strip()
Q = {  # (file prefix, pass) -> query
 ("09", 0): "swapping self-run nosql servers for a vendor-hosted lookalike",
 ("02", 0): "configuration scripts dsl",
 ("06", 0): "why does jaeger wait until first use to create storage backends",
 ("10", 0): "automated pixel diffing of screenshots in end-to-end suites",
 ("12", 0): "aws lambda faas",
 ("05", 0): "how does jaeger avoid an endless loop when tracing its own otlp receiver",
 ("14", 0): "a rehearsal tier so faulty releases get caught pre-launch",
 ("13", 0): "markdownz remark plugins",
 ("04", 0): "why must home assistant device integrations be configured in the ui not yaml",
 ("07", 0): "wiping damaged on-device storage and beginning afresh",
 ("01", 0): "arachne config schema",
 ("11", 0): "should dev staging and production share a single kubernetes cluster",
 ("08", 0): "trialling variants the moment a newly installed browser opens",
 ("15", 0): "bff rankine api",
 ("03", 0): "when is a contributor required to list themselves as code owner of an integration",
 ("09", 1): "documentdb tls certificates fqdn",
 ("02", 1): "how can developers configure arachne without hand writing datomic data",
 ("06", 1): "postponing datastore hookups until someone really wants one",
 ("10", 1): "percy cypress chromatic",
 ("12", 1): "why won't the ministry of justice platform team offer serverless functions",
 ("05", 1): "preventing monitoring software from endlessly feeding back into its intake",
 ("14", 1): "cloudfront staging lita",
 ("13", 1): "how do image sizing and table of contents change after moving markdown rendering to remark",
 ("04", 1): "household gadget add-ons enrolled solely through graphical screens",
 ("07", 1): "corruption error types sqlite",
 ("01", 1): "why does arachne put the whole application definition into one immutable config value",
 ("11", 1): "container fleet shared by every stage split by tenancy boundaries",
 ("08", 1): "nimbus first run experiments",
 ("15", 1): "what are the downsides of a backend for frontend layer between ui and services",
 ("03", 1): "making patch authors pledge upkeep of the plugins they submit",
}
OFF = [
 "should we use kafka or rabbitmq as our message broker",
 "how should we version our public rest api",
 "do we use feature flags for trunk based development",
 "why did we choose postgres instead of mysql",
 "should we adopt event sourcing with cqrs for the order service",
 "how do we do blue green or canary deployments without downtime",
 "should we put an istio service mesh in front of our microservices",
 "what is the on-call rotation and incident response process",
 "how do we translate the user interface into other languages",
 "should the mobile app be built with react native or flutter",
]
qs = []
for i in range(30):
    f = order[i % 15]; p = i // 15
    kind = KINDS[(i + p) % 3]
    qs.append({"query": Q[(f[:2], p)], "kind": kind, "target": {"file": f, "title": title(f)}})
for q in OFF:
    qs.append({"query": q, "kind": "offtopic", "target": None})
write(_os.path.join(_DATA, "adr.json"),
      "Retrieval evaluation queries for 15 markdown architecture decision records, written by a reader who never ran the search tool. Each ADR is targeted twice, on different aspects; the target is the file. Offtopic queries have no answer in the corpus.",
      "adr", qs)
from collections import Counter; print(Counter(q["kind"] for q in qs))
