// A 4-16-3 MLP with softmax over 4 samples (made by examples/make_mlp_example.py).
// hexir-compile examples/mlp.mlir -o mlp.hxb && hexir-run mlp.hxb --input x=x.npy
func.func @main(%x: tensor<4x4xf32> {hexir.name = "x"}) -> (tensor<4x3xf32> {hexir.name = "probs"}) {
  %v1 = tosa.const_shape {values = dense<[1, 4, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %v2 = tosa.reshape %x, %v1 : (tensor<4x4xf32>, !tosa.shape<3>) -> tensor<1x4x4xf32>
  %v3 = "tosa.const"() {values = dense<"0x9643CBBE8FC2F53D21B072BF21B0323FF853A33E068115BE77BE1FBEE3A51B3E4C3709BE8B6CE7BDEC51B83E8195833E6F1203BDC52030BD0AD7A33D1B2F9DBE17D94EBEBA498C3EB81E85BD3BDF2FBF6ABC74BE9EEFA73E6891EDBD508D97BD1D5AA43ED578693FB4C8B6BE448B2C3FA4701DBF0E2DB23D8FC215BF560E2D3F0681D53EFCA9113FE5D0E2BEA01AAF3EB81E85BEFA7E6ABE3789813E8941E03E60E5D03D9CC4A0BEBC74D3BEFED4383F6210983EEC51B83EA8C68B3F60E5D0BE0AD7A33F9A99C93FA01A4F3FCFF7D33EE7FBA9BEC976FE3ED34D62BE583934BCE17A14BE7368113E2FDD243F04568EBE7F6AFCBE894100BFD9CEF7BEC74B37BF"> : tensor<1x4x16xf32>} : () -> tensor<1x4x16xf32>
  %v4 = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %v5 = tosa.matmul %v2, %v3, %v4, %v4 : (tensor<1x4x4xf32>, tensor<1x4x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x16xf32>
  %v6 = "tosa.const"() {values = dense<"0x355EBABD9318043EFCA971BDF4FDD43C23DBF9BD96438B3C0E2D32BE295C8FBD6666663E68916DBD4260E53D7F6A3C3D8FC275BCB81E85BD9318043EBC7493BC"> : tensor<1x1x16xf32>} : () -> tensor<1x1x16xf32>
  %v7 = tosa.add %v5, %v6 : (tensor<1x4x16xf32>, tensor<1x1x16xf32>) -> tensor<1x4x16xf32>
  %v8 = tosa.clamp %v7 {min_val = 0.0 : f32, max_val = 3.4e38 : f32} : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %v9 = "tosa.const"() {values = dense<"0xFA7EEA3E1B2F5DBE96438B3C295C0F3E4260E53DA470BDBEA8C64BBEFCA971BD6F1283BE3BDF4F3E5839343EA24516BF83C00ABFA69BC4BE295C0F3DF6281C3F1F85EBBD9A99993DF853A3BE9CC4A0BEA24516BFBC7413BC7368913ED122DBBD2B87D63EFCA9713D583934BC52B81E3E0681153EC520B03EB4C876BEB29D2FBF96430B3D7F6A3CBE6F1203BCEE7CFF3ED578A9BEFA7E6A3E7368913EDF4F0D3E3108AC3EDF4F0DBE60E550BE77BE9F3E1B2F5D3E0681D53E6F12833D1058F93E"> : tensor<1x16x3xf32>} : () -> tensor<1x16x3xf32>
  %v10 = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %v11 = tosa.matmul %v8, %v9, %v10, %v10 : (tensor<1x4x16xf32>, tensor<1x16x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  %v12 = "tosa.const"() {values = dense<"0x4260E5BC8716D9BD60E550BE"> : tensor<1x1x3xf32>} : () -> tensor<1x1x3xf32>
  %v13 = tosa.add %v11, %v12 : (tensor<1x4x3xf32>, tensor<1x1x3xf32>) -> tensor<1x4x3xf32>
  %v14 = tosa.reduce_max %v13 {axis = 2 : i32} : (tensor<1x4x3xf32>) -> tensor<1x4x1xf32>
  %v15 = tosa.sub %v13, %v14 : (tensor<1x4x3xf32>, tensor<1x4x1xf32>) -> tensor<1x4x3xf32>
  %v16 = tosa.exp %v15 : (tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %v17 = tosa.reduce_sum %v16 {axis = 2 : i32} : (tensor<1x4x3xf32>) -> tensor<1x4x1xf32>
  %v18 = tosa.reciprocal %v17 : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %v19 = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %v20 = tosa.mul %v16, %v18, %v19 : (tensor<1x4x3xf32>, tensor<1x4x1xf32>, tensor<1xi8>) -> tensor<1x4x3xf32>
  %v21 = tosa.const_shape {values = dense<[4, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %v22 = tosa.reshape %v20, %v21 : (tensor<1x4x3xf32>, !tosa.shape<2>) -> tensor<4x3xf32>
  return %v22 : tensor<4x3xf32>
}
