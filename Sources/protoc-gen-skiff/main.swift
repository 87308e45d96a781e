// protoc-gen-skiff: reads a CodeGeneratorRequest on stdin, writes a CodeGeneratorResponse on stdout.
//
//     protoc --plugin=protoc-gen-skiff=<path> --skiff_out=<dir> --skiff_opt=Visibility=Public x.proto
import SkiffCodeGen
import SwiftProtobufPluginLibrary

SkiffCodeGenerator().main(nil)
