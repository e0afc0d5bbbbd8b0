// test_ast_grammar.cpp: the AST grammar table (frontend/ast_grammar.h) and the views that read
// nodes by name (frontend/ast_nodes.h). docs/ast-format.md writes every form of the table; a valid
// node of each kind parses and its items read back by name; a malformed node of each kind, and a
// parameter used as what it is not, is a tessera::Error naming the kernel and the node's form.
#include <catch2/catch.hpp>

#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frontend/ast.h"
#include "frontend/ast_grammar.h"
#include "frontend/ast_nodes.h"
#include "tessera/errors.h"

using namespace tessera;
using Catch::Contains;
using detail::NodeKind;
using detail::Sexp;

namespace {

// The parameters of the test kernels: out 0 (f32 [8 4]), in 1 (f32, rank 2), scalar 2 (i32),
// in 3 (i32, rank 1).
constexpr std::string_view kParams = "(params (out f32 2 [8 4]) (in f32 2) (scalar i32) (in i32 1))";

std::string kernel_storing(std::string_view expr) {
  return "(kernel " + std::string(kParams) + " (body (store 0 " + std::string(expr) + ")))";
}

// The value the kernel's one statement stores.
const Sexp& stored(const detail::KernelAst& ast) {
  return detail::StoreNode(*detail::BodyNode(*ast.body).statements().begin()).value();
}

// docs/ast-format.md with every run of whitespace made one space.
std::string format_doc() {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/docs/ast-format.md");
  std::stringstream text;
  text << in.rdbuf();
  std::string out;
  for (char c : text.str()) {
    const bool space = c == ' ' || c == '\n';
    if (!space || (!out.empty() && out.back() != ' ')) out += space ? ' ' : c;
  }
  return out;
}

}  // namespace

TEST_CASE("grammar: docs/ast-format.md writes every form of the table", "[ast][grammar]") {
  const std::string doc = format_doc();
  REQUIRE(doc.size() > 1000);
  for (const detail::NodeSpec& s : detail::kGrammar) {
    const std::string form = detail::signature(s.kind);
    INFO(form);
    CHECK(doc.find(form) != std::string::npos);
    if (s.name != s.heads) CHECK(doc.find(std::string(s.name) + " := " + std::string(s.heads)) != std::string::npos);
  }
  CHECK(detail::signature(NodeKind::load) == "(load TYPE P IDX* PAD?)");
  CHECK(detail::signature(NodeKind::loop) == "(for TYPE ID N (INIT*) (YIELD*))");
  CHECK(detail::signature(NodeKind::call) == "(call TYPE NAME LANG HEX X+)");
  CHECK(detail::node_kind_named("fast_exp") == NodeKind::unary);
  CHECK(detail::node_kind_named("ge") == NodeKind::compare);
  CHECK(detail::node_kind_named("for") == NodeKind::loop);
  CHECK(detail::node_kind_named("nope") == NodeKind::none);
}

TEST_CASE("grammar: every node kind parses and reads back by name", "[ast][grammar]") {
  const std::string idx = "(program_id i32 [] 0)";
  // Loads of each kind, padded and not.
  {
    const detail::KernelAst ast = detail::parse_ast(
        "k", kernel_storing("(add f32 [8 4] (load f32 [8 4] 1 " + idx + " (const i32 [] 0x4000000000000000) "
                            "(pad 0xfff0000000000000)) (sub f32 [8 4] (load_like f32 [8 4] 1 0) (own f32 [8 4] 0)))"));
    const detail::BinaryNode add(stored(ast));
    CHECK(add.op() == "add");
    const detail::LoadNode load(add.lhs());
    CHECK(load.input() == 1);
    std::vector<NodeKind> kinds;
    for (const Sexp& i : load.indices()) kinds.push_back(i.kind);
    CHECK(kinds == std::vector<NodeKind>{NodeKind::program_id, NodeKind::constant});
    CHECK(load.padding() == -std::numeric_limits<double>::infinity());
    CHECK(detail::ConstNode(*std::next(load.indices().begin())).value() == 2.0);
    const detail::BinaryNode sub(add.rhs());
    const detail::LoadLikeNode like(sub.lhs());
    CHECK(like.input() == 1);
    CHECK(like.output() == 0);
    CHECK_FALSE(like.padding());
    CHECK(detail::OwnNode(sub.rhs()).output() == 0);
    const detail::NodeType t = detail::type_of(load.sexp());
    CHECK(t.dtype == DType::f32);
    CHECK(t.shape == llvm::SmallVector<int64_t, 4>{8, 4});
    // The walkers' traversal skips the TYPE and the padding.
    std::vector<NodeKind> sub_kinds;
    for (const Sexp& c : detail::subnodes(load.sexp())) sub_kinds.push_back(c.kind);
    CHECK(sub_kinds == std::vector<NodeKind>{NodeKind::program_id, NodeKind::constant});
  }
  // Index, scalar and shape nodes, a select, a reduction, an mma and a device call.
  {
    const detail::KernelAst ast = detail::parse_ast(
        "k", kernel_storing(
                 "(select f32 [8 4] (lt i1 [8 4] (broadcast f32 [8 4] (cast f32 [] (arg i32 [] 2))) "
                 "(broadcast f32 [8 4] (cast f32 [] (dim i32 [] 1 1)))) "
                 "(mma f32 [8 4] (transpose f32 [8 8] (reshape f32 [8 8] (broadcast f32 [64] (cast f32 [] "
                 "(num_programs i32 [] 2))))) (broadcast f32 [8 4] (reduce f32 [8 1] max 1 (own f32 [8 4] 0))) "
                 "(own f32 [8 4] 0)) (call f32 [8 4] twice cuda 6869 (neg f32 [8 4] (own f32 [8 4] 0))))"));
    const detail::SelectNode select(stored(ast));
    const detail::BinaryNode lt(select.condition());
    CHECK(lt.kind() == NodeKind::compare);
    const detail::CastNode cast(detail::BroadcastNode(lt.lhs()).operand());
    CHECK(detail::ArgNode(cast.operand()).param() == 2);
    const detail::DimNode dim(detail::CastNode(detail::BroadcastNode(lt.rhs()).operand()).operand());
    CHECK(dim.param() == 1);
    CHECK(dim.axis() == 1);
    const detail::MmaNode mma(select.if_true());
    const detail::TransposeNode transpose(mma.a());
    const detail::ReshapeNode reshape(transpose.operand());
    const detail::BroadcastNode wide(reshape.operand());
    CHECK(detail::NumProgramsNode(detail::CastNode(wide.operand()).operand()).axis() == 2);
    const detail::ReduceNode reduce(detail::BroadcastNode(mma.b()).operand());
    CHECK(reduce.reduction() == "max");
    CHECK(reduce.axis() == 1);
    CHECK(reduce.operand().kind == NodeKind::own);
    CHECK(mma.accumulator().kind == NodeKind::own);
    const detail::CallNode call(select.if_false());
    CHECK(call.name() == "twice");
    CHECK_FALSE(call.is_ptx());
    CHECK(call.code() == "hi");
    CHECK(detail::UnaryNode(*call.args().begin()).op() == "neg");
  }
  // A loop of two carried values, read through its results.
  {
    const detail::KernelAst ast = detail::parse_ast(
        "k", kernel_storing("(add f32 [8 4] (result f32 [8 4] 0 (let 0 (for f32 [8 4] 0 (dim i32 [] 1 0) "
                            "((own f32 [8 4] 0) (iota i32 [4])) ((add f32 [8 4] (carried f32 [8 4] 0 0) (broadcast "
                            "f32 [8 4] (cast f32 [] (iv i32 [] 0)))) (carried i32 [4] 0 1))))) "
                            "(broadcast f32 [8 4] (cast f32 [4] (result i32 [4] 1 (ref f32 [8 4] 0)))))"));
    const detail::BinaryNode add(stored(ast));
    const detail::ResultNode first(add.lhs());
    CHECK(first.index() == 0);
    const detail::LoopNode loop(first.loop());
    CHECK(loop.depth() == 0);
    CHECK(loop.trip_count().kind == NodeKind::dim);
    CHECK(std::distance(loop.inits().begin(), loop.inits().end()) == 2);
    const detail::ResultNode second(detail::CastNode(detail::BroadcastNode(add.rhs()).operand()).operand());
    CHECK(&second.loop() == &first.loop());
    const detail::BinaryNode yield0(*loop.yields().begin());
    const detail::CarriedNode carried(yield0.lhs());
    CHECK(carried.loop() == 0);
    CHECK(carried.index() == 0);
    const detail::IvNode iv(detail::CastNode(detail::BroadcastNode(yield0.rhs()).operand()).operand());
    CHECK(iv.loop() == 0);
  }
  // The outline.
  {
    const detail::KernelAst ast = detail::parse_ast("k", kernel_storing("(own f32 [8 4] 0)"));
    REQUIRE(ast.params.size() == 4);
    CHECK(ast.params[0].kind == detail::ParamInfo::Kind::out);
    CHECK(ast.params[0].tile == std::vector<int64_t>{8, 4});
    CHECK(ast.params[1].rank == 2);
    CHECK(ast.params[2].kind == detail::ParamInfo::Kind::scalar);
    CHECK(ast.params[3].dtype == DType::i32);
    CHECK(detail::StoreNode(*detail::BodyNode(*ast.body).statements().begin()).output() == 0);
  }
}

TEST_CASE("grammar: a malformed node of each kind is an error naming the kernel and its form", "[ast][grammar]") {
  // (node text, what the message names).
  const std::pair<std::string, std::string> cases[] = {
      {"(load f32 [8 4] 1 (program_id i32 [] 0))", "has 1 indices for an input of rank 2"},
      {"(load f32 [8 4] x (program_id i32 [] 0) (program_id i32 [] 1))", "(load TYPE P IDX* PAD?): P must be"},
      {"(load f32 [8 4] 1 (program_id i32 [] 0) (pad 0x12) (program_id i32 [] 1))", "(pad 0xHEX)"},
      {"(load f32 [8 4] 1 (program_id i32 [] 0) (program_id i32 [] 1) (pad 0x12))", "0xHEX must be"},
      {"(load f32 [8 4] 1 (program_id i32 [] 0) [8])", "IDX must be an expression"},
      {"(load_like f32 [8 4] 1)", "(load_like TYPE P Q PAD?): Q is missing"},
      {"(load_like f32 [8 4] 1 0 0)", "an item after the last"},
      {"(load_like f32 [8 4] 0 0)", "needs an input parameter as parameter 0"},
      {"(own f32 [8 4] 1)", "needs an output parameter as parameter 1"},
      {"(own f32 [8 3] 0)", "TYPE must be a type"},
      {"(own f32 [65536 65536] 0)", "TYPE must be a type"},
      {"(own f64 [8 4] 0)", "TYPE must be a type"},
      {"(broadcast f32 [8 4] (arg f32 [] 1))", "needs a scalar parameter as parameter 1"},
      {"(broadcast f32 [8 4] (arg f32 [] 7))", "names parameter 7 of 4"},
      {"(broadcast f32 [8 4] (cast f32 [] (dim i32 [] 2 0)))", "needs a tensor parameter as parameter 2"},
      {"(broadcast f32 [8 4] (cast f32 [] (dim i32 [] 3 1)))", "names dim 1 of a rank-1 tensor"},
      {"(broadcast f32 [8 4] (cast f32 [] (program_id i32 [])))", "(program_id TYPE D): D is missing"},
      {"(broadcast f32 [8 4] (cast f32 [] (num_programs i32 [] x)))", "D must be an integer"},
      {"(broadcast f32 [8 4] (const f32 [] 1.0))", "(const TYPE 0xHEX): 0xHEX must be"},
      {"(iota i32 [4] 0)", "(iota TYPE): an item after the last"},
      {"(exp f32 [8 4])", "(UNOP TYPE X): X is missing"},
      {"(add f32 [8 4] (own f32 [8 4] 0))", "(BINOP TYPE X Y): Y is missing"},
      {"(eq i1 [8 4] (own f32 [8 4] 0) 0)", "(CMP TYPE X Y): Y must be an expression"},
      {"(select f32 [8 4] (own f32 [8 4] 0) (own f32 [8 4] 0))", "(select TYPE C X Y): Y is missing"},
      {"(call f32 [8 4] f cuda 6869)", "(call TYPE NAME LANG HEX X+): X is missing"},
      {"(call f32 [8 4] f c 6869 (own f32 [8 4] 0))", "LANG must be one of cuda ptx"},
      {"(call f32 [8 4] f ptx 686 (own f32 [8 4] 0))", "HEX must be hex-encoded bytes"},
      {"(cast f32 [8 4] 0)", "(cast TYPE X): X must be an expression"},
      {"(reshape f32 [8 4])", "(reshape TYPE X): X is missing"},
      {"(transpose f32 [8 4] (params))", "X must be an expression"},
      {"(reduce f32 [8 4] prod 1 (own f32 [8 4] 0))", "KIND must be one of sum max min"},
      {"(reduce f32 [8 4] sum (own f32 [8 4] 0))", "AXIS must be an integer"},
      {"(mma f32 [8 4] (own f32 [8 4] 0) (own f32 [8 4] 0))", "(mma TYPE A B C): C is missing"},
      {"(result f32 [8 4] 0 (for f32 [8 4] 0 (const i32 [] 0x4000000000000000) () ()))",
       "a loop must carry at least one value"},
      {"(result f32 [8 4] 0 (for f32 [8 4] 0 (const i32 [] 0x4000000000000000) ((own f32 [8 4] 0)) ()))",
       "a loop yields a different number of values than it carries"},
      {"(result f32 [8 4] 0 (for f32 [8 4] 0 (const i32 [] 0x4000000000000000) ((own f32 [8 4] 0) 1) ()))",
       "a list without a head holds expressions only"},
      {"(result f32 [8 4] 0 (own f32 [8 4] 0))", "(result TYPE K FOR): FOR must be a loop"},
      {"(for f32 [8 4] 0 (const i32 [] 0x4000000000000000) ((own f32 [8 4] 0)) ((own f32 [8 4] 0)))",
       "(store P EXPR): EXPR must be an expression"},
      {"(add f32 [8 4] (iv i32 []) (own f32 [8 4] 0))", "(iv TYPE ID): ID is missing"},
      {"(carried f32 [8 4] 0)", "(carried TYPE ID K): K is missing"},
      {"(frob f32 [8 4] (own f32 [8 4] 0))", "unknown node 'frob'"},
      {"(let 0 (own f32 [8 4] 0) 1)", "expected (let ID EXPR)"},
      {"(add f32 [8 4] (let 0 (own f32 [8 4] 0)) (ref f32 [8 4]))", "expected (ref TYPE ID)"},
  };
  for (const auto& [expr, what] : cases) {
    INFO(expr);
    CHECK_THROWS_WITH(detail::parse_ast("bad_node", kernel_storing(expr)),
                      Contains("kernel 'bad_node'") && Contains("malformed AST") && Contains(what));
  }
  // The outline.
  const std::pair<std::string, std::string> outlines[] = {
      {"(kernel (params (out f32 2 [8 4])))", "(kernel PARAMS BODY): BODY is missing"},
      {"(kernel (params (out f32 2 [8 3])) (body))", "[TILE_DIM*]"},
      {"(kernel (params (out f32 2 [8])) (body))", "output tile rank"},
      {"(kernel (params (in f32 5)) (body))", "tensor rank must be 1..4"},
      {"(kernel (params (in f32)) (body))", "(in DTYPE RANK): RANK is missing"},
      {"(kernel (params (scalar f32 1)) (body))", "(scalar DTYPE): an item after the last"},
      {"(kernel (params (own f32 [8] 0)) (body))", "PARAM must be a parameter"},
      {"(kernel (params) (body (own f32 [8] 0)))", "STMT must be a statement"},
      {"(kernel (params (in f32 1)) (body (store 0 (own f32 [8] 0))))", "needs an output parameter"},
      {"(body)", "expected (kernel (params ...) (body ...))"},
  };
  for (const auto& [text, what] : outlines) {
    INFO(text);
    CHECK_THROWS_WITH(detail::parse_ast("bad_outline", text),
                      Contains("kernel 'bad_outline'") && Contains("malformed AST") && Contains(what));
  }
}
